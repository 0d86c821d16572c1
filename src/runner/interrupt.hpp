#pragma once
// SIGINT/SIGTERM during a run (Ctrl-C, a CI timeout): the running case finishes, no other
// starts, and the reports are written for the cases that finished, marked interrupted. A
// second signal ends the process at once (the handler is reset after the first).
namespace kvbench {

void install_interrupt_handler();
// The signal received (SIGINT, SIGTERM), or 0.
int interrupt_signal();

}  // namespace kvbench

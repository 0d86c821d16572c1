#pragma once
// SIGINT/SIGTERM during `run`, `check`'s callers and `golden` (Ctrl-C, a CI timeout): the
// running case finishes, no other starts, the reports are written for the cases that
// finished (marked interrupted), and the process exits 128 + the signal. A second signal ends
// the process at once, after removing the temporary files it was writing (no `.tmp` is left).
// The handler is installed with SA_RESTART: a signal while kvbench waits on a write (stdout a
// full pipe) restarts the write instead of failing it, so the log keeps its last rows.
namespace kvbench {

void install_interrupt_handler();
// The signal received (SIGINT, SIGTERM), or 0.
int interrupt_signal();

}  // namespace kvbench

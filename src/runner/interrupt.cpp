#include "runner/interrupt.hpp"

#include <csignal>

#include "core/file_io.hpp"

namespace kvbench {
namespace {

volatile std::sig_atomic_t received = 0;

void on_signal(int sig) {
  if (!received) {
    received = sig;
    return;
  }
  // The second signal: end now, as the default action would, leaving no temporary file.
  remove_temporary_files_now();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);  // one handler at a time, whichever signal came first
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return received; }

}  // namespace kvbench

#include "runner/interrupt.hpp"

#include <csignal>

namespace kvbench {
namespace {

volatile std::sig_atomic_t received = 0;

void on_signal(int sig) { received = sig; }

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;  // a second signal takes the default action
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return received; }

}  // namespace kvbench

#include "proxy/event_loop.h"

#include <pthread.h>
#include <signal.h>

#include <exception>

#include "spdlog/spdlog.h"

namespace ccsandbox::proxy {

EventLoop::EventLoop() {
  work_.emplace(context_.get_executor());
  thread_ = std::thread([this] {
    // splice(2) into a socket whose peer is gone raises SIGPIPE (it has no MSG_NOSIGNAL); on
    // this thread it stays blocked and the call fails with EPIPE instead.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    pthread_setname_np(pthread_self(), "egress-loop");
    while (true) {
      try {
        context_.run();
        return;
      } catch (const std::exception& e) {
        // A throwing callback must not take every session's egress down with it.
        spdlog::error("egress event loop: handler threw: {}", e.what());
      }
    }
  });
}

EventLoop::~EventLoop() {
  work_.reset();
  context_.stop();
  thread_.join();
}

}  // namespace ccsandbox::proxy

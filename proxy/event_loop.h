// The one event loop every session's proxies run on: an Asio io_context served by one thread.
// All proxy state lives on that thread, so nothing in proxy/ takes a lock per connection.
//
//   EventLoop loop;                        // the thread starts here
//   auto proxies = SessionProxies::Start(loop, options);
//   ...
//   proxies->Stop();                       // every session stops before the loop goes
//   // ~EventLoop stops and joins the thread
#ifndef CCSANDBOX_PROXY_EVENT_LOOP_H_
#define CCSANDBOX_PROXY_EVENT_LOOP_H_

#include <future>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "asio/executor_work_guard.hpp"
#include "asio/io_context.hpp"
#include "asio/post.hpp"

namespace ccsandbox::proxy {

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  asio::io_context& context() { return context_; }
  asio::io_context::executor_type executor() { return context_.get_executor(); }

  // True on the loop's own thread (inside a handler or a callback).
  bool InLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  // Runs `f` on the loop thread and waits for its result. Never call it from the loop thread.
  template <typename F>
  auto RunSync(F&& f) -> std::invoke_result_t<F> {
    using R = std::invoke_result_t<F>;
    std::packaged_task<R()> task(std::forward<F>(f));
    std::future<R> result = task.get_future();
    asio::post(context_, [&task] { task(); });
    return result.get();
  }

 private:
  asio::io_context context_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_EVENT_LOOP_H_

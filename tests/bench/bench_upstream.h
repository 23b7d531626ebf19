// The benchmarks' upstream server: 'S' + 8-byte big-endian N -> N bytes, then close; 'E' -> echo
// until EOF. Serves every connection the acceptor takes on its io_context.
//
//   asio::io_context context(1);
//   asio::ip::tcp::acceptor acceptor(context, endpoint);
//   acceptor.listen(4096);
//   bench::ServeUpstream(acceptor);
//   context.run();
#ifndef CCSANDBOX_TESTS_BENCH_BENCH_UPSTREAM_H_
#define CCSANDBOX_TESTS_BENCH_BENCH_UPSTREAM_H_

#include "asio/ip/tcp.hpp"

namespace ccsandbox::bench {

void ServeUpstream(asio::ip::tcp::acceptor& acceptor);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_BENCH_UPSTREAM_H_

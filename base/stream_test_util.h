// Test helpers for byte streams over Asio sockets: a pattern that shows lost, repeated or
// reordered chunks, reading to EOF, writing then half-closing. Test-only.
#ifndef CCSANDBOX_BASE_STREAM_TEST_UTIL_H_
#define CCSANDBOX_BASE_STREAM_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "asio/buffer.hpp"
#include "asio/error.hpp"
#include "asio/socket_base.hpp"
#include "asio/write.hpp"

namespace ccsandbox::testing {

// Bytes that differ along the stream, so a lost, repeated or reordered chunk shows.
inline std::string Pattern(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : bytes) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return bytes;
}

// Reads until EOF (or an error: then `error` says which).
template <typename Socket>
std::string ReadAll(Socket& s, asio::error_code* error = nullptr) {
  std::string got;
  std::vector<char> buf(65536);
  asio::error_code e;
  for (;;) {
    const size_t n = s.read_some(asio::buffer(buf), e);
    if (e) break;
    got.append(buf.data(), n);
  }
  if (error != nullptr) *error = e == asio::error::eof ? asio::error_code() : e;
  return got;
}

template <typename Socket>
void WriteAndShutdown(Socket& s, const std::string& bytes) {
  asio::error_code e;
  asio::write(s, asio::buffer(bytes), e);
  s.shutdown(asio::socket_base::shutdown_send, e);
}

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_BASE_STREAM_TEST_UTIL_H_

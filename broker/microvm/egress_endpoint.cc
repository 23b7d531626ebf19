#include "broker/microvm/egress_endpoint.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace ccsandbox::broker::microvm {
namespace {

constexpr size_t kReadChunk = 256 * 1024;

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

bool Transient(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

}  // namespace

EgressEndpoint::EgressEndpoint(Role role, UniqueFd channel, Connect connect)
    : role_(role),
      channel_(std::move(channel)),
      connect_(std::move(connect)),
      decoder_(role == Role::kHost ? FrameSide::kFromGuest : FrameSide::kFromHost) {
  struct stat st;
  channel_is_socket_ = fstat(channel_.get(), &st) == 0 && S_ISSOCK(st.st_mode);
  SetNonBlocking(channel_.get());
  read_buffer_.resize(kReadChunk);
}

size_t EgressEndpoint::buffered() const {
  return toward_sockets_ + (outbox_.size() - outbox_at_) + decoder_.buffered();
}

void EgressEndpoint::Queue(EgressFrameType type, uint32_t stream, const char* data, size_t size) {
  AppendEgressFrame(&outbox_, type, stream, data, size);
}

void EgressEndpoint::Fail(State state, std::string why) {
  if (state_ != State::kOpen) return;
  state_ = state;
  error_ = std::move(why);
  outbox_.clear();
  outbox_at_ = 0;
  for (auto& [id, stream] : streams_) stream.fd.Reset();
  streams_.clear();
  toward_sockets_ = 0;
}

bool EgressEndpoint::Open(UniqueFd local, EgressListener listener) {
  if (role_ != Role::kGuest || state_ != State::kOpen || streams_.size() >= kEgressMaxStreams) {
    return false;
  }
  SetNonBlocking(local.get());
  const uint32_t id = ++highest_;
  streams_[id].fd = std::move(local);
  const char which = static_cast<char>(listener);
  Queue(EgressFrameType::kOpen, id, &which, 1);
  return true;
}

void EgressEndpoint::ResetAll() {
  while (!streams_.empty()) Reset(streams_.begin()->first, state_ == State::kOpen);
}

void EgressEndpoint::Reopen() {
  ResetAll();
  state_ = State::kOpen;
  error_.clear();
  outbox_.clear();
  outbox_at_ = 0;
  decoder_ =
      EgressFrameDecoder(role_ == Role::kHost ? FrameSide::kFromGuest : FrameSide::kFromHost);
}

void EgressEndpoint::Reset(uint32_t id, bool tell_peer) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  toward_sockets_ -= it->second.to_local.size() - it->second.to_local_at;
  streams_.erase(it);
  if (tell_peer) Queue(EgressFrameType::kReset, id);
}

void EgressEndpoint::MaybeDone(uint32_t id, const Stream& stream) {
  if (stream.local_eof && stream.shut) Reset(id, false);
}

void EgressEndpoint::Fill(std::vector<pollfd>* fds, bool with_channel) {
  polled_.clear();
  polled_channel_ = with_channel && state_ == State::kOpen;
  if (polled_channel_) {
    const size_t pending = outbox_.size() - outbox_at_;
    const short in = pending < kEgressControlHigh ? POLLIN : 0;
    fds->push_back({channel_.get(), static_cast<short>(in | (pending > 0 ? POLLOUT : 0)), 0});
  }
  if (state_ != State::kOpen) return;
  const bool room = outbox_.size() - outbox_at_ < kEgressOutboxHigh;
  for (const auto& [id, stream] : streams_) {
    short events = 0;
    if (!stream.local_eof && stream.send_credit > 0 && room) events |= POLLIN;
    if (stream.to_local.size() > stream.to_local_at) events |= POLLOUT;
    if (events == 0) continue;
    fds->push_back({stream.fd.get(), events, 0});
    polled_.push_back(id);
  }
}

bool EgressEndpoint::Handle(const pollfd* fds, size_t count) {
  size_t at = 0;
  if (polled_channel_ && count > 0) {
    const short revents = fds[0].revents;
    at = 1;
    const bool reading = fds[0].events & POLLIN;
    if (reading && (revents & (POLLIN | POLLHUP | POLLERR))) ReadChannel();
  }
  for (size_t i = 0; at + i < count && i < polled_.size() && state_ == State::kOpen; ++i) {
    const pollfd& p = fds[at + i];
    if (p.revents == 0) continue;
    auto it = streams_.find(polled_[i]);
    if (it == streams_.end()) continue;
    const uint32_t id = it->first;
    if ((p.revents & (POLLOUT | POLLHUP | POLLERR)) &&
        it->second.to_local.size() > it->second.to_local_at && !WriteLocal(id, it->second)) {
      continue;
    }
    it = streams_.find(id);
    if (it != streams_.end() && (p.revents & (POLLIN | POLLHUP | POLLERR)) &&
        !it->second.local_eof && it->second.send_credit > 0) {
      ReadLocal(id, it->second);
    }
  }
  peak_outbox_ = std::max(peak_outbox_, outbox_.size() - outbox_at_);
  if (state_ == State::kOpen) WriteChannel();
  return state_ == State::kOpen;
}

void EgressEndpoint::ReadChannel() {
  // A guest's virtio-serial port reads one buffer (a page) per call: read what is there, up to
  // the buffer, before decoding.
  size_t got = 0;
  while (got < read_buffer_.size()) {
    const ssize_t n = read(channel_.get(), read_buffer_.data() + got, read_buffer_.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      got += n;
      continue;
    }
    if (n < 0 && Transient(errno)) break;
    if (got > 0) break;  // the EOF or error is seen on the next call
    Fail(State::kClosed, n == 0 ? "the egress channel closed"
                                : std::string("the egress channel: ") + strerror(errno));
    return;
  }
  if (got == 0) return;
  decoder_.Feed(read_buffer_.data(), got);
  EgressFrame frame;
  std::string error;
  EgressFrameDecoder::Result result;
  while (state_ == State::kOpen &&
         (result = decoder_.Next(&frame, &error)) == EgressFrameDecoder::Result::kFrame) {
    OnFrame(frame);
  }
  if (state_ == State::kOpen && result == EgressFrameDecoder::Result::kBad) {
    Fail(State::kBroken, error);
  }
}

void EgressEndpoint::WriteChannel() {
  while (outbox_.size() > outbox_at_) {
    const char* data = outbox_.data() + outbox_at_;
    const size_t size = outbox_.size() - outbox_at_;
    const ssize_t n = channel_is_socket_ ? send(channel_.get(), data, size, MSG_NOSIGNAL)
                                         : write(channel_.get(), data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && Transient(errno)) break;
    if (n <= 0) {
      Fail(State::kClosed, std::string("the egress channel: ") + strerror(errno));
      return;
    }
    outbox_at_ += n;
  }
  if (outbox_at_ == outbox_.size()) {
    outbox_.clear();
    outbox_at_ = 0;
  } else if (outbox_at_ > kEgressOutboxHigh) {
    outbox_.erase(0, outbox_at_);
    outbox_at_ = 0;
  }
}

void EgressEndpoint::OnFrame(const EgressFrame& frame) {
  const uint32_t id = frame.stream;
  if (frame.type == EgressFrameType::kOpen) {
    OnOpen(id, static_cast<EgressListener>(frame.payload[0]));
    return;
  }
  if (id > highest_) {
    Fail(State::kBroken, "egress frame for stream " + std::to_string(id) + ", never opened");
    return;
  }
  auto it = streams_.find(id);
  if (it == streams_.end()) return;  // closed here; the frame was in flight
  Stream& stream = it->second;
  switch (frame.type) {
    case EgressFrameType::kData:
      if (stream.peer_fin) {
        Fail(State::kBroken, "egress data after fin on stream " + std::to_string(id));
      } else if (frame.payload.size() > stream.recv_left) {
        Fail(State::kBroken, "egress data beyond the window on stream " + std::to_string(id));
      } else {
        stream.recv_left -= frame.payload.size();
        if (stream.to_local_at == stream.to_local.size()) {
          stream.to_local.clear();
          stream.to_local_at = 0;
        }
        stream.to_local.append(frame.payload);
        toward_sockets_ += frame.payload.size();
        peak_toward_sockets_ = std::max(peak_toward_sockets_, toward_sockets_);
      }
      return;
    case EgressFrameType::kFin:
      if (stream.peer_fin) {
        Fail(State::kBroken, "egress fin twice on stream " + std::to_string(id));
        return;
      }
      stream.peer_fin = true;
      if (stream.to_local.size() == stream.to_local_at) WriteLocal(id, stream);
      return;
    case EgressFrameType::kReset:
      Reset(id, false);
      return;
    case EgressFrameType::kWindow: {
      const uint32_t credit = DecodeU32(frame.payload);
      if (credit > kEgressWindow - stream.send_credit) {
        Fail(State::kBroken, "egress credit beyond the window on stream " + std::to_string(id));
        return;
      }
      stream.send_credit += credit;
      return;
    }
    case EgressFrameType::kOpen:
      return;
  }
}

void EgressEndpoint::OnOpen(uint32_t id, EgressListener listener) {
  // The decoder lets opens through from the guest only.
  if (id <= highest_) {
    Fail(State::kBroken, "egress open of stream " + std::to_string(id) + ", not a new id");
    return;
  }
  highest_ = id;
  // Over the cap (a guest's count can lag the host's by the frames in flight): refused.
  UniqueFd fd;
  if (streams_.size() < kEgressMaxStreams && connect_) fd = connect_(listener);
  if (!fd.valid()) {
    Queue(EgressFrameType::kReset, id);
    return;
  }
  SetNonBlocking(fd.get());
  streams_[id].fd = std::move(fd);
}

bool EgressEndpoint::ReadLocal(uint32_t id, Stream& stream) {
  const size_t want = std::min<size_t>({stream.send_credit, kEgressMaxData, read_buffer_.size()});
  const ssize_t n = recv(stream.fd.get(), read_buffer_.data(), want, 0);
  if (n < 0 && Transient(errno)) return true;
  if (n < 0) {
    Reset(id, true);
    return false;
  }
  if (n == 0) {
    stream.local_eof = true;
    Queue(EgressFrameType::kFin, id);
    MaybeDone(id, stream);
    return streams_.count(id) > 0;
  }
  stream.send_credit -= n;
  Queue(EgressFrameType::kData, id, read_buffer_.data(), n);
  return true;
}

bool EgressEndpoint::WriteLocal(uint32_t id, Stream& stream) {
  while (stream.to_local.size() > stream.to_local_at) {
    const ssize_t n = send(stream.fd.get(), stream.to_local.data() + stream.to_local_at,
                           stream.to_local.size() - stream.to_local_at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && Transient(errno)) break;
    if (n <= 0) {
      Reset(id, true);
      return false;
    }
    stream.to_local_at += n;
    stream.consumed += n;
    toward_sockets_ -= n;
  }
  const bool drained = stream.to_local.size() == stream.to_local_at;
  if (drained) {
    stream.to_local.clear();
    stream.to_local_at = 0;
  }
  if (stream.consumed > 0 && (drained || stream.consumed >= kEgressWindow / 4)) {
    const std::string credit = EncodeU32(stream.consumed);
    Queue(EgressFrameType::kWindow, id, credit.data(), credit.size());
    stream.recv_left += stream.consumed;
    stream.consumed = 0;
  }
  if (drained && stream.peer_fin && !stream.shut) {
    shutdown(stream.fd.get(), SHUT_WR);
    stream.shut = true;
    MaybeDone(id, stream);
    return streams_.count(id) > 0;
  }
  return true;
}

}  // namespace ccsandbox::broker::microvm

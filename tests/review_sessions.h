// Test support: the real daemons, a broker stub without client-side message limits, and read-only
// review sessions over one work tree (no create guard needed on any host), launched and destroyed
// with a deadline. For suites that drive many sessions or much input (faults, load, bad input,
// limits).
//
//   class LoadTest : public ReviewSessionsTest {};
//   TEST_F(LoadTest, X) { ASSERT_TRUE(Launch("s").ok()); ...; ASSERT_TRUE(Destroy("s").ok()); }
#ifndef CCSANDBOX_TESTS_REVIEW_SESSIONS_H_
#define CCSANDBOX_TESTS_REVIEW_SESSIONS_H_

#include <signal.h>

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {

class ReviewSessionsTest : public ::testing::Test {
 protected:
  // How the daemons start (a suite parametrised over the broker's identity overrides it).
  virtual DaemonOptions Options() { return {}; }

  void SetUp() override {
    // A write to a daemon that went away, or to a program that stopped reading its stdin,
    // must not kill the test.
    signal(SIGPIPE, SIG_IGN);
    auto daemons = Daemons::Start(Options());
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    // No client-side limits: what the daemons do with whatever arrives is the point.
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);
    args.SetMaxReceiveMessageSize(-1);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateCustomChannel(d_->broker_address(), grpc::InsecureChannelCredentials(), args));
    work_ = d_->MakeWorkdir();
  }

  grpc::Status Launch(const std::string& id, const std::string& mode = "review") {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    request.mutable_spec()->set_mode(mode);
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
    v1::SandboxHandle handle;
    return stub_->Launch(&ctx, request, &handle);
  }

  grpc::Status Destroy(const std::string& id) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    v1::SessionRequest request;
    request.set_session_id(id);
    v1::SandboxHandle handle;
    return stub_->Destroy(&ctx, request, &handle);
  }

  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_REVIEW_SESSIONS_H_

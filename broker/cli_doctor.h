// `sandboxctl doctor [--json]`: everything a person would check by hand before trusting the
// sandbox on this host, one line each (doctor_checks.h), and a live self-test that shows three
// denials from the event stream (doctor_self_test.h). Exits 1 when something required is
// missing (each FAIL line carries its fix), else 0; 128+signal when a stop signal cut the
// self-test short (after its clean-up). With no broker at `address` it still checks the host,
// and FAILs naming the socket.
//
//   return RunDoctor("unix:/run/ccsandbox-broker/broker.sock", /*json=*/false);
#ifndef CCSANDBOX_BROKER_CLI_DOCTOR_H_
#define CCSANDBOX_BROKER_CLI_DOCTOR_H_

#include <string>

namespace ccsandbox::broker {

// Call before anything starts threads: the host checks fork.
int RunDoctor(const std::string& address, bool json);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_DOCTOR_H_

// sandboxctl's --json shape of any message: one line of proto3 JSON with every field printed,
// zeros included (an exit code of 0 is said, not left out).
#ifndef CCSANDBOX_BROKER_CLI_JSON_H_
#define CCSANDBOX_BROKER_CLI_JSON_H_

#include <string>

#include "google/protobuf/message.h"

namespace ccsandbox::broker {

std::string JsonLine(const google::protobuf::Message& message);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_JSON_H_

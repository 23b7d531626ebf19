// grpc.reflection.v1.ServerReflection over a descriptor pool (the generated pool by default):
// what generic clients (grpcurl, reflection clients of any language) use to find the services
// and fetch their descriptors. The daemons serve it through base/standard_services, which also
// gives it the server's list of services; gRPC's own library serves only v1alpha.
//
// Every request on a stream gets one response, with the request echoed in original_request:
//   list_services                  the names of the server's services (SetServiceList)
//   file_by_filename               the file, then its transitive dependencies, each once
//   file_containing_symbol         the same, for the file defining a service, method, message,
//                                  enum, enum value, field or extension (full names)
//   file_containing_extension      the same, for the file defining that extension number
//   all_extension_numbers_of_type  the message type's known extension numbers, ascending
// A name the pool does not know is an error_response with NOT_FOUND (the stream goes on); a
// request that asks nothing known to this version is UNIMPLEMENTED.
#ifndef CCSANDBOX_BASE_REFLECTION_V1_SERVICE_H_
#define CCSANDBOX_BASE_REFLECTION_V1_SERVICE_H_

#include <atomic>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "grpcpp/grpcpp.h"
#include "proto/reflection.grpc.pb.h"

namespace ccsandbox {

// The answer to one request, from `pool`; `services` are list_services' names.
grpc::reflection::v1::ServerReflectionResponse AnswerReflection(
    const grpc::reflection::v1::ServerReflectionRequest& request,
    const google::protobuf::DescriptorPool& pool, const std::vector<std::string>& services);

class ReflectionV1Service final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  explicit ReflectionV1Service(const google::protobuf::DescriptorPool* pool =
                                   google::protobuf::DescriptorPool::generated_pool())
      : pool_(pool) {}

  // The names list_services answers, read at each request (gRPC's ServerInitializer list of
  // the server's registered services); `services` outlives this service. Until then: none.
  void SetServiceList(const std::vector<std::string>* services) { services_.store(services); }

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>* stream) override;

 private:
  const google::protobuf::DescriptorPool* const pool_;
  std::atomic<const std::vector<std::string>*> services_{nullptr};
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_REFLECTION_V1_SERVICE_H_

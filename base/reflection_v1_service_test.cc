#include "base/reflection_v1_service.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/descriptor_database.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace ccsandbox {
namespace {

namespace pb = google::protobuf;
using grpc::reflection::v1::ServerReflectionRequest;
using grpc::reflection::v1::ServerReflectionResponse;

// Three files: ext.proto extends t.Base and depends on base.proto and leaf.proto, which
// depends on base.proto too (so base.proto is reached twice).
constexpr const char* kFiles[] = {
    R"pb(name: "a/base.proto"
         package: "t"
         message_type {
           name: "Base"
           extension_range { start: 100 end: 200 }
         }
         enum_type {
           name: "Color"
           value { name: "RED" number: 0 }
         }
         service {
           name: "Svc"
           method { name: "Call" input_type: ".t.Base" output_type: ".t.Base" }
         })pb",
    R"pb(name: "a/leaf.proto"
         package: "t"
         dependency: "a/base.proto"
         message_type {
           name: "Leaf"
           field {
             name: "base"
             number: 1
             label: LABEL_OPTIONAL
             type: TYPE_MESSAGE
             type_name: ".t.Base"
           }
         })pb",
    R"pb(name: "a/ext.proto"
         package: "t"
         dependency: "a/base.proto"
         dependency: "a/leaf.proto"
         extension {
           name: "ext_a"
           number: 150
           label: LABEL_OPTIONAL
           type: TYPE_INT32
           extendee: ".t.Base"
         }
         extension {
           name: "ext_b"
           number: 120
           label: LABEL_OPTIONAL
           type: TYPE_MESSAGE
           type_name: ".t.Leaf"
           extendee: ".t.Base"
         })pb",
};

class ReflectionV1Test : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* text : kFiles) {
      pb::FileDescriptorProto file;
      ASSERT_TRUE(pb::TextFormat::ParseFromString(text, &file)) << text;
      ASSERT_NE(pool_.BuildFile(file), nullptr) << text;
    }
  }

  ServerReflectionResponse Ask(const std::string& request_text) {
    ServerReflectionRequest request;
    EXPECT_TRUE(pb::TextFormat::ParseFromString(request_text, &request)) << request_text;
    return AnswerReflection(request, pool_, services_);
  }

  pb::DescriptorPool pool_;
  const std::vector<std::string> services_ = {"t.Svc", "grpc.health.v1.Health"};
};

// One line per response: what a client would read from it.
std::string Summary(const ServerReflectionResponse& response) {
  std::vector<std::string> parts;
  switch (response.message_response_case()) {
    case ServerReflectionResponse::kFileDescriptorResponse:
      for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
        pb::FileDescriptorProto file;
        parts.push_back(file.ParseFromString(bytes) ? file.name() : "<unparsable>");
      }
      return absl::StrCat("files: ", absl::StrJoin(parts, " "));
    case ServerReflectionResponse::kListServicesResponse:
      for (const auto& service : response.list_services_response().service()) {
        parts.push_back(service.name());
      }
      return absl::StrCat("services: ", absl::StrJoin(parts, " "));
    case ServerReflectionResponse::kAllExtensionNumbersResponse:
      return absl::StrCat(
          "extensions of ", response.all_extension_numbers_response().base_type_name(), ": ",
          absl::StrJoin(response.all_extension_numbers_response().extension_number(), " "));
    case ServerReflectionResponse::kErrorResponse:
      return absl::StrCat("error ", response.error_response().error_code(), ": ",
                          response.error_response().error_message());
    case ServerReflectionResponse::MESSAGE_RESPONSE_NOT_SET:
      return "nothing";
  }
  return "?";
}

struct Case {
  const char* request;  // text format
  const char* answer;   // Summary()
};

// NOT_FOUND is 5, UNIMPLEMENTED 12.
constexpr Case kCases[] = {
    {R"(list_services: "")", "services: t.Svc grpc.health.v1.Health"},
    {R"(list_services: "*")", "services: t.Svc grpc.health.v1.Health"},
    {R"(file_by_filename: "a/base.proto")", "files: a/base.proto"},
    {R"(file_by_filename: "a/ext.proto")", "files: a/ext.proto a/base.proto a/leaf.proto"},
    {R"(file_by_filename: "a/none.proto")", "error 5: file 'a/none.proto' not found"},
    {R"(file_containing_symbol: "t.Svc")", "files: a/base.proto"},
    {R"(file_containing_symbol: "t.Svc.Call")", "files: a/base.proto"},
    {R"(file_containing_symbol: "t.Color")", "files: a/base.proto"},
    // Enum values are siblings of their enum (C++ scoping).
    {R"(file_containing_symbol: "t.RED")", "files: a/base.proto"},
    {R"(file_containing_symbol: "t.Leaf")", "files: a/leaf.proto a/base.proto"},
    {R"(file_containing_symbol: "t.Leaf.base")", "files: a/leaf.proto a/base.proto"},
    {R"(file_containing_symbol: "t.ext_b")", "files: a/ext.proto a/base.proto a/leaf.proto"},
    {R"(file_containing_symbol: "t.Missing")", "error 5: symbol 't.Missing' not found"},
    {R"(file_containing_symbol: "")", "error 5: symbol '' not found"},
    {R"(file_containing_extension { containing_type: "t.Base" extension_number: 150 })",
     "files: a/ext.proto a/base.proto a/leaf.proto"},
    {R"(file_containing_extension { containing_type: "t.Base" extension_number: 151 })",
     "error 5: extension 151 of 't.Base' not found"},
    {R"(file_containing_extension { containing_type: "t.Nope" extension_number: 150 })",
     "error 5: message type 't.Nope' not found"},
    {R"(all_extension_numbers_of_type: "t.Base")", "extensions of t.Base: 120 150"},
    {R"(all_extension_numbers_of_type: "t.Leaf")", "extensions of t.Leaf: "},
    {R"(all_extension_numbers_of_type: "t.Nope")", "error 5: message type 't.Nope' not found"},
    {R"(all_extension_numbers_of_type: "t.Svc")", "error 5: message type 't.Svc' not found"},
    {R"(host: "h")", "error 12: the request asks nothing this server knows (grpc.reflection.v1)"},
};

TEST_F(ReflectionV1Test, AnswersEachKindOfRequest) {
  for (const Case& c : kCases) {
    EXPECT_EQ(Summary(Ask(c.request)), c.answer) << c.request;
  }
}

TEST_F(ReflectionV1Test, EchoesTheHostAndTheRequest) {
  ServerReflectionResponse response = Ask(R"(host: "h1" file_containing_symbol: "t.Svc")");
  EXPECT_EQ(response.valid_host(), "h1");
  EXPECT_EQ(response.original_request().file_containing_symbol(), "t.Svc");
  EXPECT_EQ(response.original_request().host(), "h1");
}

// What a client does with the answer: a pool of its own, from the bytes alone.
TEST_F(ReflectionV1Test, TheFilesOfAnAnswerBuildAPoolOfTheirOwn) {
  ServerReflectionResponse response = Ask(R"(file_containing_symbol: "t.ext_a")");
  pb::SimpleDescriptorDatabase database;
  for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
    pb::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    ASSERT_TRUE(database.Add(file));
  }
  pb::DescriptorPool client(&database);
  const pb::FieldDescriptor* ext = client.FindExtensionByName("t.ext_a");
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->containing_type()->full_name(), "t.Base");
  ASSERT_NE(client.FindMethodByName("t.Svc.Call"), nullptr);
}

// gRPC's generated pool, as the daemons serve it: found lazily, with the well-known types.
TEST(ReflectionV1GeneratedPoolTest, ResolvesItsOwnInterface) {
  ServerReflectionRequest request;
  request.set_file_containing_symbol("grpc.reflection.v1.ServerReflection");
  ServerReflectionResponse response =
      AnswerReflection(request, *pb::DescriptorPool::generated_pool(), {});
  ASSERT_TRUE(response.has_file_descriptor_response()) << response.DebugString();
  pb::FileDescriptorProto file;
  ASSERT_TRUE(file.ParseFromString(response.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(file.name(), "proto/reflection.proto");
  EXPECT_EQ(file.package(), "grpc.reflection.v1");
}

}  // namespace
}  // namespace ccsandbox

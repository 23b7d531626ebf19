#include "gateway/upstream_symrefs.h"

#include <string>

#include "gateway/pkt_line.h"
#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

std::string Line(const std::string& text) { return PktLine::Data(text).Encode(); }

const std::string kA(40, 'a');

TEST(LsRefs, TheRequestAsksForSymrefsUnderRefs) {
  EXPECT_EQ(LsRefsRequest(), "0014command=ls-refs\n0001000csymrefs\n0015ref-prefix refs/\n0000");
}

TEST(LsRefs, SymbolicRefsAreReadAndOthersIgnored) {
  absl::StatusOr<Symrefs> refs =
      ParseLsRefs(Line(kA + " refs/heads/main\n") +
                  Line(kA + " refs/heads/master symref-target:refs/heads/main\n") +
                  Line(kA + " refs/tags/v1 peeled:" + kA + "\n") + "0000");
  ASSERT_TRUE(refs.ok()) << refs.status();
  EXPECT_EQ(*refs, (Symrefs{{"refs/heads/master", "refs/heads/main"}}));
  absl::StatusOr<Symrefs> none = ParseLsRefs("0000");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(LsRefs, WhatIsNotAVersion2AnswerIsAnError) {
  // A v0 advertisement (an upstream that ignored Git-Protocol: version=2), a cut answer, junk.
  for (const std::string& answer :
       {Line("# service=git-upload-pack\n") + "0000", Line(kA + " refs/heads/main\n"),
        std::string("zzzz"), std::string("")}) {
    EXPECT_FALSE(ParseLsRefs(answer).ok()) << answer;
  }
}

}  // namespace
}  // namespace ccsandbox::gateway

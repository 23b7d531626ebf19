// Shell command policy throughput: command lines evaluated per second (parse, classify, decide),
// single-threaded, on two mixes:
//  - "agent mix": the lines agents send most (status and diff, reads and greps, builds and
//    tests, commits and pushes, heredoc-written files, installs, a little obfuscation);
//  - "table": every row of tests/testdata/command_policy_cases.tsv, equally weighted.
// A program that prints figures, not a test:
//   bazel run -c opt //tests/bench:command_policy_bench [-- --seconds=2 | --passes=N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "policy/command/command_policy.h"
#include "policy/command/shell_parser.h"
#include "tests/bench/bench_table.h"

namespace {

using ccsandbox::policy::EvaluateCommand;
using ccsandbox::policy::Mode;
using ccsandbox::policy::PolicyVerdict;

const std::vector<std::string>& AgentMix() {
  static const auto* mix = new std::vector<std::string>{
      "git status",
      "git status --short",
      "git diff",
      "git diff --stat HEAD~1",
      "git log --oneline -20",
      "ls -la",
      "ls src/",
      "cat package.json",
      "cat src/main.ts | head -50",
      "grep -rn 'TODO' src/ --include='*.ts'",
      "rg -n 'fn handle_request' --type rust",
      "find . -name '*.py' -not -path './.venv/*' | head -20",
      "sed -n '120,180p' src/server/routes.py",
      "wc -l src/**/*.go",
      "npm test",
      "npm run build 2>&1 | tail -30",
      "pytest -q tests/test_api.py -k 'auth and not slow'",
      "cargo test --workspace 2>&1 | tail -40",
      "go test ./... -run TestParse",
      "make -j8 && ./build/app --selftest",
      "cd frontend && npm ci && npm run lint",
      "python3 -c 'import json,sys; print(json.load(open(\"data.json\"))[\"version\"])'",
      "git add -A && git commit -m 'fix: handle empty input in parser'",
      "git push -u origin agent/fix-parser",
      "gh pr create --title 'Fix parser' --body 'Handles empty input.'",
      "cat > src/util.py <<'EOF'\ndef add(a, b):\n    return a + b\nEOF",
      "mkdir -p tests/fixtures && cp data/*.json tests/fixtures/",
      "pip install -r requirements.txt",
      "docker build -t app:dev . && docker run --rm app:dev pytest",
      "curl -s http://localhost:8080/health | jq .",
      "for f in src/*.c; do gcc -c \"$f\" -o \"build/$(basename \"$f\" .c).o\"; done",
      "if [ -f .env ]; then set -a; . ./.env; set +a; fi; echo \"${DATABASE_URL:-unset}\"",
      "bash -c 'cd repo && git fetch origin && git rebase origin/main'",
      "sudo apt-get install -y jq",
      "rm -rf build dist node_modules/.cache",
      "eval \"$(ssh-agent -s)\"",
      "timeout 60 npx prettier --check 'src/**/*.{ts,tsx}'",
      "export PATH=\"$HOME/.local/bin:$PATH\" && which poetry",
      "git -C ../shared log -1 --format=%H",
      "echo $(date +%s) > .timestamp",
  };
  return *mix;
}

std::vector<std::string> LoadTable(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    out.push_back(absl::StrReplaceAll(cols[0], {{"↵", "\n"}}));
  }
  return out;
}

// Evaluates the mix round-robin for about `seconds` (or exactly `passes` times when set);
// prints lines per second.
void Run(const char* label, const std::vector<std::string>& mix, Mode mode, double seconds,
         int passes) {
  using Clock = std::chrono::steady_clock;
  size_t bytes = 0;
  for (const std::string& s : mix) bytes += s.size();
  // Warm-up: one pass (tables, allocator).
  int sink = 0;
  for (const std::string& s : mix) sink += static_cast<int>(EvaluateCommand(mode, s).verdict);
  size_t evaluated = 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point now = start;
  for (int pass = 0; passes > 0 ? pass < passes : now < stop; ++pass) {
    for (const std::string& s : mix) {
      sink += static_cast<int>(EvaluateCommand(mode, s).verdict);
    }
    evaluated += mix.size();
    now = Clock::now();
  }
  const double elapsed = std::chrono::duration<double>(now - start).count();
  std::printf("%-10s %-12s %5zu lines (avg %3zu B)  %10.0f lines/s  %7.2f us/line  [%d]\n", label,
              std::string(ccsandbox::policy::ModeName(mode)).c_str(), mix.size(),
              bytes / mix.size(), evaluated / elapsed, 1e6 * elapsed / evaluated, sink & 1);
  // Issue 6 asks for "well over 100k/s" on a realistic mix.
  ccsandbox::bench::ReportRow(
      {.figure = absl::StrCat(label, ", ", ccsandbox::policy::ModeName(mode), " mode"),
       .ours = evaluated / elapsed,
       .unit = "lines/s",
       .target = ccsandbox::bench::AtLeast(100000)});
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  int passes = 0;
  std::string cases = "tests/testdata/command_policy_cases.tsv";
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--seconds=")) {
      if (!absl::SimpleAtod(a, &seconds)) seconds = 2;
    } else if (absl::ConsumePrefix(&a, "--passes=")) {
      if (!absl::SimpleAtoi(a, &passes)) passes = 0;
    } else if (absl::ConsumePrefix(&a, "--cases=")) {
      cases = std::string(a);
    } else {
      std::fprintf(stderr,
                   "usage: command_policy_bench [--seconds=N | --passes=N] [--cases=FILE]\n");
      return 2;
    }
  }
  std::vector<std::string> table = LoadTable(cases);
  std::printf("command policy: parse + classify + decide, one thread, %.1fs per figure\n", seconds);
  for (Mode mode : {Mode::kChat, Mode::kPlan}) Run("agent mix", AgentMix(), mode, seconds, passes);
  if (table.empty()) {
    std::fprintf(stderr, "no table at %s (pass --cases=FILE)\n", cases.c_str());
    return 1;
  }
  for (Mode mode : {Mode::kChat, Mode::kPlan}) Run("table", table, mode, seconds, passes);
  return 0;
}

#!/usr/bin/env bash
# Builds the egress fuzz targets with clang++ (libFuzzer + ASan + UBSan, Debian's clang) and
# runs each for N seconds (default 60). Not part of `bazel test //...`.
#   tests/fuzz/run_egress_fuzz.sh [seconds]
# Work files (binaries, corpora, crash inputs) go to ${EGRESS_FUZZ_DIR:-/tmp/egress_fuzz}.
# Exits non-zero when a target finds a crash; the input that crashed is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
work=${EGRESS_FUZZ_DIR:-/tmp/egress_fuzz}
cxx=${CXX_FUZZ:-clang++}
command -v "$cxx" >/dev/null || { echo "run_egress_fuzz: $cxx not found; install: apt-get install clang" >&2; exit 1; }
mkdir -p "$work"

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I.)
absl=(-labsl_statusor -labsl_status -labsl_cord -labsl_str_format_internal -labsl_strings
      -labsl_strings_internal -labsl_throw_delegate -labsl_base -labsl_raw_logging_internal
      -labsl_int128)
policy=(policy/egress/address.cc policy/egress/host.cc policy/egress/pattern.cc
        policy/egress/lists.cc policy/egress/allowlist.cc)

declare -A sources=(
  [http_head_parser_fuzz]="proxy/http_head_parser.cc proxy/http_forward.cc"
  [socks5_parser_fuzz]="proxy/socks5_parser.cc policy/egress/address.cc"
  [egress_matcher_fuzz]="${policy[*]}"
)
declare -A max_len=([http_head_parser_fuzz]=20000 [socks5_parser_fuzz]=1200 [egress_matcher_fuzz]=600)

seed() {  # seed <dir> <name> <printf-format>
  printf "$3" >"$1/$2"
}

mkdir -p "$work/corpus/http_head_parser_fuzz" "$work/corpus/socks5_parser_fuzz" \
  "$work/corpus/egress_matcher_fuzz"
c=$work/corpus/http_head_parser_fuzz
seed "$c" connect 'CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\nProxy-Authorization: Basic dTpw\r\n\r\n'
seed "$c" get 'GET http://allowed.test:8080/p?q=1 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, X-A\r\nX-A: 1\r\nContent-Length: 3\r\n\r\nabc'
seed "$c" chunked 'POST http://[::1]:81/ HTTP/1.0\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'
c=$work/corpus/socks5_parser_fuzz
seed "$c" greeting '\x05\x02\x00\x02'
seed "$c" userpass '\x01\x03bob\x02pw'
seed "$c" domain '\x05\x01\x00\x03\x0callowed.test\x1f\x90'
seed "$c" ipv4 '\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50'
seed "$c" ipv6 '\x05\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xa9\xfe\xa9\xfe\x00\x50'
c=$work/corpus/egress_matcher_fuzz
seed "$c" wildcard '*.example.com\na.b.example.com\x01\xbb'
seed "$c" middle 'bedrock.*.amazonaws.com\nbedrock.us-east-1.amazonaws.com\x01\xbb'
seed "$c" port 'internal.example:8443\nINTERNAL.example.\x20\xfb'
seed "$c" v6 '[2001:db8::1]:22\n2001:db8:0::1\x00\x16'
seed "$c" idn 'xn--bcher-kva.example\nXN--BCHER-KVA.example\x00\x50'
seed "$c" metadata '*.google.internal\nmetadata.google.internal\x00\x50'

status=0
for target in http_head_parser_fuzz socks5_parser_fuzz egress_matcher_fuzz; do
  echo "== $target: building"
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" "tests/fuzz/$target.cc" ${sources[$target]} "${absl[@]}" \
    -o "$work/$target"
  echo "== $target: fuzzing for ${seconds}s"
  mkdir -p "$work/crashes/$target"
  log=$work/$target.log
  if "$work/$target" -max_total_time="$seconds" -max_len="${max_len[$target]}" -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$work/crashes/$target/" \
      "$work/corpus/$target" >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$log" | tail -3
    echo "   corpus: $(ls "$work/corpus/$target" | wc -l) inputs; no crash"
  else
    status=1
    echo "!! $target found a problem:"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
  fi
done
exit $status

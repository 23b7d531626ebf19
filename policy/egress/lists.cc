#include "policy/egress/lists.h"

namespace ccsandbox::policy {
namespace {

constexpr EgressListEntry kBaselineAllowed[] = {
    // LLM API providers. Each is also a way to send data out (with a key the agent holds);
    // that is the job the agent is run for, so the provider stays reachable.
    {"*.anthropic.com", "Anthropic API and Claude Code sign-in (api., console.)"},
    {"api.openai.com", "OpenAI API (Codex CLI, SDKs)"},
    {"auth.openai.com", "Codex CLI sign-in token refresh"},
    {"chatgpt.com", "Codex CLI signed in with ChatGPT calls chatgpt.com/backend-api"},
    {"generativelanguage.googleapis.com", "Gemini API"},
    {"cloudcode-pa.googleapis.com", "Gemini CLI with Google sign-in (Code Assist API)"},
    {"oauth2.googleapis.com", "Gemini CLI Google sign-in token refresh"},
    {"aiplatform.googleapis.com", "Vertex AI global endpoint (regional ones: add them)"},
    {"bedrock.*.amazonaws.com",
     "Amazon Bedrock control plane, one region label; never *.amazonaws.com, which would open "
     "every S3 bucket as an upload target"},
    {"bedrock-runtime.*.amazonaws.com", "Amazon Bedrock model invocation, one region label"},
    {"api.mistral.ai", "Mistral API"},
    {"api.cohere.com", "Cohere API"},
    {"api.together.xyz", "Together AI API"},
    {"openrouter.ai", "OpenRouter API"},
    {"api.groq.com", "Groq API"},
    {"api.deepseek.com", "DeepSeek API"},
    {"api.x.ai", "xAI API"},
    {"api.githubcopilot.com", "GitHub Copilot chat/completions API"},
    {"*.githubcopilot.com", "GitHub Copilot per-plan endpoints (api.individual., api.business.)"},
    {"opencode.ai", "opencode's hosted model gateway"},
    {"ampcode.com", "Amp's model backend"},
    // Git hosting (https on 443; ssh on 22 named explicitly).
    {"gitlab.com", "GitLab git over https and API"},
    {"gitlab.com:22", "GitLab git over ssh"},
    {"bitbucket.org", "Bitbucket git over https"},
    {"bitbucket.org:22", "Bitbucket git over ssh"},
    {"codeberg.org", "Codeberg git over https"},
    // Package registries.
    {"registry.npmjs.org", "npm registry (npm, pnpm, bun)"},
    {"registry.yarnpkg.com", "Yarn's mirror of the npm registry"},
    {"pypi.org", "Python package index (pip, uv)"},
    {"files.pythonhosted.org", "Python package downloads"},
    {"crates.io", "Rust crate registry API"},
    {"index.crates.io", "Rust sparse crate index"},
    {"static.crates.io", "Rust crate downloads"},
    {"proxy.golang.org", "Go module proxy"},
    {"sum.golang.org", "Go checksum database"},
    {"repo.maven.apache.org", "Maven Central (Maven)"},
    {"repo1.maven.org", "Maven Central (Gradle, older Maven)"},
    {"rubygems.org", "RubyGems registry"},
    {"index.rubygems.org", "RubyGems compact index (bundler)"},
    // The model index.
    {"huggingface.co", "Hugging Face Hub API and file resolution"},
    {"*.huggingface.co", "Hugging Face LFS CDN (cdn-lfs.huggingface.co)"},
    {"*.hf.co", "Hugging Face download redirects (cdn-lfs.hf.co, cas-bridge.xethub.hf.co)"},
    {"models.dev", "Model catalogue (providers, limits, prices) read by coding agents"},
};

constexpr EgressListEntry kGithub[] = {
    {"github.com", "git over https, web"},
    {"github.com:22", "git over ssh"},
    {"*.github.com", "api., codeload., uploads., lfs., and ssh.github.com:443 (ssh over 443)"},
    {"raw.githubusercontent.com", "raw file downloads"},
    {"objects.githubusercontent.com", "release and archive downloads"},
    {"release-assets.githubusercontent.com", "release asset downloads"},
    {"media.githubusercontent.com", "git LFS object downloads"},
};

constexpr EgressListEntry kBaselineDenied[] = {
    // Cloud metadata endpoints: they hand out the host's cloud credentials to any local caller.
    {"169.254.169.254", "instance metadata (AWS, GCP, Azure, OCI, DigitalOcean, OpenStack)"},
    {"169.254.170.2", "AWS ECS task metadata and container credentials"},
    {"169.254.170.23", "Amazon EKS Pod Identity agent (credentials)"},
    {"fd00:ec2::254", "AWS instance metadata over IPv6"},
    {"fd00:ec2::23", "Amazon EKS Pod Identity agent over IPv6"},
    {"100.100.100.200", "Alibaba Cloud instance metadata"},
    {"192.0.0.192", "Oracle Cloud legacy instance metadata"},
    {"168.63.129.16", "Azure WireServer (VM agent goal state, extension settings)"},
    {"metadata.google.internal", "GCP metadata server"},
    {"metadata.goog", "GCP metadata server alias"},
    {"metadata", "GCP metadata server via the resolver's search domain"},
    {"instance-data", "AWS instance metadata name via the search domain"},
    {"instance-data.ec2.internal", "AWS instance metadata name"},
    {"metadata.tencentyun.com", "Tencent Cloud instance metadata"},
    {"metadata.platformequinix.com", "Equinix Metal instance metadata"},
    // Telemetry: usage and crash reports carry prompts, paths and environment details.
    {"statsig.anthropic.com", "Claude Code feature-flag and usage telemetry"},
    {"api.statsig.com", "Statsig SDK telemetry"},
    {"*.statsigapi.net", "Statsig SDK telemetry"},
    {"sentry.io", "crash reporting"},
    {"*.sentry.io", "crash reporting ingest (o123.ingest.sentry.io)"},
    {"*.datadoghq.com", "log and metrics intake (http-intake.logs.*.datadoghq.com)"},
    {"api.segment.io", "product analytics"},
    {"play.googleapis.com", "Gemini CLI usage statistics (Clearcut)"},
};

}  // namespace

absl::Span<const EgressListEntry> BaselineAllowedDomains() { return kBaselineAllowed; }
absl::Span<const EgressListEntry> GithubDomains() { return kGithub; }
absl::Span<const EgressListEntry> BaselineDeniedDestinations() { return kBaselineDenied; }

}  // namespace ccsandbox::policy

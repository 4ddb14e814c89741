#!/bin/sh
# What backup.sh and restore.sh share (included by `# @include lib-s3.sh`, see pod/shell-file.ts):
# fail and log naming the script ($script_name, set before), aws_cli (AWS_CLI, with the endpoint
# AWS_ENDPOINT_URL when set; stdin closed).
# shellcheck disable=SC2154 # script_name is set by the including script
fail() { echo "$script_name: error: $*" >&2; exit 1; }
log() { echo "$script_name: $*" >&2; }
aws_bin="${AWS_CLI:-aws}"
aws_cli() {
  if [ -n "${AWS_ENDPOINT_URL:-}" ]; then "$aws_bin" --endpoint-url "$AWS_ENDPOINT_URL" "$@" </dev/null
  else "$aws_bin" "$@" </dev/null; fi
}

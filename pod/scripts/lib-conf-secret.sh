#!/bin/sh
# What start.sh and sentinel-start.sh share to write a config line safely (included by
# `# @include lib-conf-secret.sh`, see pod/shell-file.ts): nl (a newline), conf_quote (a value for
# valkey.conf / sentinel.conf: double-quoted, backslash and double quote escaped) and
# read_password, which sets $quoted from $password_file (readable, not empty, a single line). The
# password goes file -> shell variable -> builtin printf: never argv. Needs fail.
# shellcheck disable=SC2154 # password_file is set by the including script's # @values (pod/shell-file.ts)
nl='
'
conf_quote() { printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"; }
read_password() {
  [ -r "$password_file" ] || fail "$password_file is not readable"
  password=$(cat "$password_file")
  [ -n "$password" ] || fail "the password in $password_file is empty"
  case "$password" in *"$nl"*) fail "the password must be a single line" ;; esac
  # shellcheck disable=SC2034 # read by the including script's printf
  quoted=$(conf_quote "$password")
  unset password
}

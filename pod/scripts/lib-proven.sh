#!/bin/sh
# The set of peers heal.sh has proven (included by `# @include lib-proven.sh`, see pod/shell-file.ts): "id ip port"
# lines of the peers that answered CLUSTER MYID with their own node ID at that address in this run. A peer is asked
# once per address while its link stays up, not every round; one that fails to answer is asked again next round; one
# whose link reads down, or whose name moves to another address, loses its proof and is asked again. Needs nl set.
# shellcheck disable=SC2154 # set by the including script (pod/shell-file.ts)
proven=
# Whether peer $1 is proven at address $2 port $3.
is_proven() { case "$nl$proven" in *"$nl$1 $2 $3$nl"*) return 0 ;; esac; return 1; }
# Drops every proof of peer $1, rebuilding the set line by line: dash's ${var#*word} tries every prefix of var, which
# at 200 peers (11 KB) cost 0.5 s of CPU a call; this costs about 5 ms.
forget() {
  case "$nl$proven" in *"$nl$1 "*) ;; *) return 0 ;; esac
  f_kept=
  while read -r f_id f_rest; do
    [ -z "$f_id" ] || [ "$f_id" = "$1" ] || f_kept="$f_kept$f_id $f_rest$nl"
  done <<EOF
$proven
EOF
  proven=$f_kept
}

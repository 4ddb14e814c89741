#!/bin/sh
# CLUSTER MYID asked of many peers in one valkey-cli process (included by `# @include lib-ask-myids.sh` after
# lib-cli.sh, see pod/shell-file.ts; cluster-heal.sh uses it). Needs log, nl, proven, and answers_awk (the text of
# myid-answers.awk) set before it is called.
# shellcheck disable=SC2154 # set by the including script (pod/shell-file.ts)
# Asks the peers of $1 ("id ip port name" lines) for CLUSTER MYID, all in one valkey-cli process under one bound
# ($2 seconds, else cli_timeout): per peer `connect ip port`, `cluster myid`, then the local server echoes a marker,
# so each answer is paired with its own ask (myid-answers.awk). Appends the peers that answered with their own ID to $proven. A call cut
# short by its bound (a peer that accepts but never answers, a SYN into a dead address, or a machine too busy to get
# through them all) leaves the rest for the next round; the ask it stopped at joins $slow, whose peers are asked after
# the others from then on, so a peer that hangs costs one bound a round and delays no other (asking the rest again at
# once, skipping one per cut, could again spawn a process per ask on a machine too busy to finish a call in its
# bound). One process per member and round, not one per peer: a full restart of N members asked N² times in N²
# processes (200 members on one host: 39,800, at about 7 ms of CPU each against 0.3 ms per ask in one process).
slow=
ask_myids() {
  a_asks=$(printf '%s' "$1" | awk -v slow="$slow" '
    BEGIN { n = split(slow, s, " "); for (i = 1; i <= n; i++) last[s[i]] = 1 }
    $1 in last { later = later $0 "\n"; next }
    { print }
    END { printf "%s", later }')
  a_out=$(printf '%s\n' "$a_asks" | awk -v h="$local_host" -v p="$port" \
    '{ printf "connect %s %s\ncluster myid\nconnect %s %s\necho heal-ask-%d\n", $2, $3, h, p, NR }' |
    local_cli_batch_within "${2:-$cli_timeout}" 2>/dev/null)
  while read -r a_verdict a_id a_ip a_port a_name a_reply; do
    case "$a_verdict" in
      ok) proven="$proven$a_id $a_ip $a_port$nl" ;;
      no) [ -z "$a_reply" ] || log "$a_name at $a_ip:$a_port is node '$a_reply', not $a_id" ;;
      stuck) case " $slow " in *" $a_id "*) ;; *) slow="$slow $a_id" ;; esac ;;
    esac
  done <<EOF
$(printf '%s\n--\n%s\n' "$a_asks" "$a_out" | awk "$answers_awk")
EOF
}

# Pairs CLUSTER MYID answers with their asks (pod/scripts/cluster-heal.sh includes it as its answers_awk). Input:
# the asks, one `id ip port name` line each, then a line `--`, then what one valkey-cli printed for them: per ask k,
# the peer's reply to CLUSTER MYID, then the local server's echo of the marker heal-ask-k. Prints, per ask whose
# marker came: `ok id ip port name` when the only line before its marker is that id, else `no id ip port name
# reply`; then `finished K` (the last ask whose marker came), and, when the call stopped before its last ask,
# `stuck id` (the ask it stopped at). A reply counts only between its own marker and the one before it, so an answer is
# never credited to another ask. No single quote in it: the script holds it in one.
BEGIN { asking = 1; n = 0; finished = 0; lines = 0; reply = "" }
asking && $0 == "--" { asking = 0; next }
asking { if (NF >= 4) { n++; ask[n] = $1 " " $2 " " $3 " " $4; id[n] = $1 } next }
/^heal-ask-[0-9]+$/ {
  k = substr($0, 10) + 0
  if (k > finished && k <= n) {
    for (j = finished + 1; j < k; j++) print "no " ask[j]
    print ((lines == 1 && reply == id[k]) ? "ok " : "no ") ask[k] ((lines == 1 && reply != id[k]) ? " " reply : "")
    finished = k
  }
  lines = 0; reply = ""; next
}
{ lines++; reply = $0 }
END { print "finished " finished; if (finished < n) print "stuck " id[finished + 1] }

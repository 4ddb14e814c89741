# The AZ failback decision (pod/scripts/cluster-failback.sh includes it as its decide_awk): awk
# over `valkey-cli cluster shards` (one reply element per line) with -v me=ID -v maxlag=BYTES;
# prints `act` when this node should fail back now, else `wait <reason>`. No single quote in it:
# the script holds it in one.
function flush() {
  if (id != "" && role != "") { n++; nid[n] = id; nrole[n] = role; nzone[n] = zone; nhealth[n] = health; noff[n] = off; nshard[n] = shard }
  id = ""; role = ""; zone = ""; health = ""; off = 0
}
BEGIN { shard = 0; n = 0; expect = ""; inslots = 0 }
{ sub(/\r$/, "") }
expect != "" {
  if (expect == "id") { flush(); id = $0 } else if (expect == "role") role = $0
  else if (expect == "availability-zone") zone = $0
  else if (expect == "health") health = $0
  else if (expect == "replication-offset") off = $0 + 0
  expect = ""; next
}
$0 == "slots" { flush(); shard++; inslots = 1; slotcount[shard] = 0; next }
$0 == "nodes" { inslots = 0; next }
inslots { slotcount[shard]++; next }
$0 == "id" || $0 == "port" || $0 == "ip" || $0 == "endpoint" || $0 == "hostname" || $0 == "role" || $0 == "replication-offset" || $0 == "health" || $0 == "availability-zone" || $0 == "tls-port" { expect = $0; next }
END {
  flush()
  total = 0
  for (i = 1; i <= n; i++) {
    # A failed old primary lingers in its shard as "master": only online primaries count.
    if (nrole[i] != "master" || slotcount[nshard[i]] == 0 || nhealth[i] != "online") continue
    if (nzone[i] == "") { print "wait primary " nid[i] " has no availability-zone"; exit }
    total++; primaries[nzone[i]]++; pzone[nshard[i]] = nzone[i]; poff[nshard[i]] = noff[i]
  }
  if (total == 0) { print "wait no primaries with slots"; exit }
  best = ""
  for (i = 1; i <= n; i++) {
    s = nshard[i]
    if (nrole[i] != "replica" || nhealth[i] != "online" || nzone[i] == "" || !(s in pzone)) continue
    if (2 * primaries[pzone[s]] <= total) continue
    if (2 * (primaries[nzone[i]] + 1) > total) continue
    if (poff[s] - noff[i] > maxlag) continue
    if (best == "" || (nid[i] "") < (best "")) best = nid[i]
  }
  if (best == "") { print "wait no zone holds a primary majority that a synced replica can fix"; exit }
  if (best != me) { print "wait " best " fails back first"; exit }
  print "act"
}

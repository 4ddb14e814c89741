# The replies of one AZ failback round (cluster-failback.sh includes it before failback-decision.awk in its round_awk):
# the answers of the local server to CONFIG GET availability-zone, CLUSTER INFO, CLUSTER MYID and CLUSTER SHARDS, asked in
# one valkey-cli call, each answer after a marker the server echoed (failback-state, failback-myid, failback-shards,
# failback-end after the last). Only the shards section falls through to failback-decision.awk. Prints `zone <the
# zone of the server, or nothing>`, `me <my node ID, or nothing>`, then `unsettled` when cluster_state is not ok or the
# call stopped before its end marker (cut or refused: that round decides nothing, not even on a part of the shards),
# else the line of the decision. No single quote in it.
BEGIN { part = "zone"; zone_lines = 0; settled = 0; my_id = "" }
{ sub(/\r$/, "") }
$0 == "failback-state" || $0 == "failback-myid" || $0 == "failback-shards" || $0 == "failback-end" { part = substr($0, 10); next }
part == "zone" { if (++zone_lines == 2) kept_zone = $0; next }
part == "state" { if ($0 == "cluster_state:ok") settled = 1; next }
part == "myid" { if (my_id == "") my_id = $0; next }
part == "shards" { me = my_id }
END {
  print "zone " kept_zone
  print "me " my_id
  if (!settled || part != "end" || my_id == "") { print "unsettled"; exit }
}

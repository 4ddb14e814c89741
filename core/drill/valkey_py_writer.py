"""The drills' second client library: a valkey-py writer (PyPI `valkey`) beside the ioredis streams.

Writes unique keys `<prefix>:<stream>:<n>` at a fixed rate (one SET every 1/rate s, never waiting
for the previous one: each write runs on a worker thread) until SIGTERM or stdin closes, and prints
one JSON line per write on stdout, the drill ledger's WriteRecord (core/drill/ledger.ts):
stream, key, value, sentAt, doneAt (epoch ms), ok, error, waited (always false: no WAIT). A write
counts as acknowledged only when SET's reply is exactly its success reply (valkey-py: True for
OK); any other reply is an unexpected reply (`unexpectedReply`, which fails the drill as the
ioredis streams' do), and a reply later than --timeout-ms after the write was sent is a failed
write (the deadline: a late acknowledgement never counts). Nothing else is printed on stdout.

Replication: valkey.sentinel.Sentinel(...).master_for(name). Cluster: valkey.cluster.ValkeyCluster,
its members' announced hostnames resolved through the drill's hosts file (the local stand-in for
pod DNS, lines `<ip> <hostname> <port>`), read again at every lookup.

--settings recommended (docs/client-settings.md): a reply that says the node can no longer take
writes (NOREPLICAS, READONLY, LOADING, MASTERDOWN) drops the pool's connections, so the next write
asks the Sentinels for the primary again, and it asks them with SENTINEL GET-MASTER-ADDR-BY-NAME
(AddrSentinel) instead of the library's SENTINEL MASTERS. --settings defaults: the library's own behaviour (it
drops a connection on timeouts and connection errors, and on READONLY from a Sentinel-managed
primary). Both: bounded commands (socket timeout = --timeout-ms) and no retries inside the
library, so every write is acknowledged or failed within the bound, as the ioredis streams.

The password comes from VALKEY_PASSWORD (never printed).
"""

import argparse
import faulthandler
import json
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import valkey
from valkey.backoff import NoBackoff
from valkey.cluster import ClusterNode, ValkeyCluster
from valkey.retry import Retry
from valkey.sentinel import MasterNotFoundError, Sentinel

# Replies after which a client should ask again where the primary is (docs/client-settings.md).
FOLLOW_ERRORS = ("NOREPLICAS", "READONLY", "LOADING", "MASTERDOWN")


def endpoint(text):
    host, _, port = text.rpartition(":")
    if host == "" or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected host:port, got {text!r}")
    return (host, int(port))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=["replication", "cluster"], required=True)
    p.add_argument("--stream", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--rate", type=int, required=True)
    p.add_argument("--timeout-ms", type=int, default=1000)
    p.add_argument("--settings", choices=["recommended", "defaults"], default="recommended")
    p.add_argument("--sentinel", type=endpoint, action="append", default=[])
    p.add_argument("--master", default="")
    p.add_argument("--seed", type=endpoint, action="append", default=[])
    p.add_argument("--hosts-file", default="")
    a = p.parse_args(argv)
    if a.rate < 1 or a.timeout_ms < 1:
        p.error("--rate and --timeout-ms must be ≥ 1")
    if a.mode == "replication" and (not a.sentinel or a.master == ""):
        p.error("replication needs --sentinel host:port (one or more) and --master")
    if a.mode == "cluster" and not a.seed:
        p.error("cluster needs --seed host:port (one or more)")
    return a


def hosts_remap(path):
    """address_remap for ValkeyCluster: a hostname in the hosts file becomes its current address."""

    def remap(address):
        host, port = address
        if path == "":
            return address
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 2 and parts[1] == host:
                        return (parts[0], port)
        except OSError:
            pass
        return address

    return remap


class AddrSentinel(Sentinel):
    """recommended: the primary from SENTINEL GET-MASTER-ADDR-BY-NAME, which names the promoted replica
    from +promoted-slave on; the library's SENTINEL MASTERS lists the old primary on the Sentinel
    leading a failover until +failover-end, about a second later. First answer wins; the Sentinel
    that gave it is asked first next time (as the library does)."""

    def discover_master(self, service_name):
        for i, s in enumerate(self.sentinels):
            try:
                addr = s.sentinel_get_master_addr_by_name(service_name)
            except (valkey.exceptions.ConnectionError, valkey.exceptions.TimeoutError):
                continue
            if addr:
                if i:
                    self.sentinels[0], self.sentinels[i] = s, self.sentinels[0]
                host = addr[0].decode() if isinstance(addr[0], bytes) else addr[0]
                return host, int(addr[1])
        raise MasterNotFoundError(f"No master found for {service_name!r}")


def make_client(a, password):
    timeout = a.timeout_ms / 1000
    common = dict(socket_timeout=timeout, socket_connect_timeout=timeout, password=password)
    if a.mode == "cluster":
        return ValkeyCluster(
            startup_nodes=[ClusterNode(h, port) for h, port in a.seed],
            address_remap=hosts_remap(a.hosts_file),
            retry=Retry(NoBackoff(), 0),
            # No retry after a connection error or timeout (a retry could acknowledge a write up
            # to twice the bound late); a MOVED reply is still followed, as every cluster client does.
            cluster_error_retry_attempts=0,
            **common,
        )
    kind = AddrSentinel if a.settings == "recommended" else Sentinel
    sentinel = kind(a.sentinel, sentinel_kwargs=dict(common), **common)
    return sentinel.master_for(a.master, retry=Retry(NoBackoff(), 0), **common)


class Writer:
    def __init__(self, a, client):
        self.a = a
        self.client = client
        self.out_lock = threading.Lock()
        # A plain flag, not a threading.Event: SIGTERM's handler runs on the main thread between two
        # bytecodes, possibly while that thread holds the Event's lock inside Event.wait, and
        # Event.set would then wait on that lock forever (seen in CI: the writer never exited).
        self.stopping = False

    def emit(self, record):
        line = json.dumps(record, separators=(",", ":"))
        with self.out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def follow(self, message):
        """recommended: the node can no longer take writes: drop the connections (the next asks anew)."""
        if self.a.settings != "recommended" or not message.startswith(FOLLOW_ERRORS):
            return
        pool = getattr(self.client, "connection_pool", None)
        if pool is not None:
            pool.disconnect()

    def write(self, seq):
        key = f"{self.a.prefix}:{self.a.stream}:{seq}"
        value = f"v{seq}"
        sent_at = time.time() * 1000
        record = dict(stream=self.a.stream, key=key, value=value, sentAt=sent_at, ok=False, waited=False)
        try:
            reply = self.client.set(key, value)
            record["doneAt"] = time.time() * 1000
            if record["doneAt"] - sent_at > self.a.timeout_ms:
                record["error"] = f"no reply within the {self.a.timeout_ms} ms deadline"
            elif reply is True:
                record["ok"] = True
            else:
                record["unexpectedReply"] = f"SET → {reply!r}"
        except valkey.exceptions.ResponseError as err:
            record["doneAt"] = time.time() * 1000
            record["error"] = str(err)
            self.follow(str(err))
        except Exception as err:  # noqa: BLE001 - every failure is a failed write, named
            record["doneAt"] = time.time() * 1000
            record["error"] = f"{type(err).__name__}: {err}"
        self.emit(record)

    def run(self):
        interval = 1 / self.a.rate
        # Enough workers for every write of one command timeout (plus slack) to be in flight.
        workers = min(512, self.a.rate * (self.a.timeout_ms // 1000 + 2))
        started = time.monotonic()
        seq = 0
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            while not self.stopping:
                due = int((time.monotonic() - started) / interval) + 1
                while seq < due:
                    seq += 1
                    pool.submit(self.write, seq)
                time.sleep(min(0.01, interval / 2))
        finally:
            # A write still queued when told to stop was never sent: it is dropped, not sent late (a
            # starved machine can queue many); the writes in flight end within their bound.
            pool.shutdown(wait=True, cancel_futures=True)


def main(argv):
    a = parse_args(argv)
    password = os.environ.get("VALKEY_PASSWORD") or None
    writer = Writer(a, make_client(a, password))
    # The client is built (cluster: the slots and COMMAND asked of the seeds): the drill counts its
    # warm-up from this line, so the fault never lands before the writer could connect.
    writer.emit(dict(ready=True))

    def stop(*_):
        writer.stopping = True

    signal.signal(signal.SIGTERM, stop)
    # SIGUSR1 (sent when the writer overstays its stop bound): every thread's stack on stderr.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # The drill closes stdin to stop it as well (a parent that dies closes it too).
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    writer.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

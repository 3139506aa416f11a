# ExaBGP API helper for test/interop/exabgp.test.ts: appends every JSON message
# ExaBGP sends to api.jsonl next to this file, and passes the lines written to
# cmd.fifo (next to it too) to ExaBGP as API commands.
import os
import sys
import threading

here = os.path.dirname(os.path.abspath(__file__))
log = open(os.path.join(here, 'api.jsonl'), 'a', buffering=1)


def commands():
    while True:
        with open(os.path.join(here, 'cmd.fifo')) as fifo:
            for line in fifo:
                sys.stdout.write(line)
                sys.stdout.flush()


threading.Thread(target=commands, daemon=True).start()
for line in sys.stdin:
    log.write(line)

"""reround.py IN OUT: OUT is the perf.data IN with the first sample of its first round
moved past that round's FINISHED_ROUND, as a busy CPU's ring read late puts it.  perf's
reader (ordered_events) hands on a round's records only up to the latest time of the
round before, so the moved sample is still read in its place: perf script prints OUT as
it prints IN.  Exit 3 where IN has no first round with two samples."""
import struct
import sys

SAMPLE, TRACING_DATA, ROUND = 9, 66, 68

b = bytearray(open(sys.argv[1], "rb").read())
assert b[:8] == b"PERFILE2", "a little-endian perf.data"
if struct.unpack_from("<Q", b, 8)[0] == 16:  # pipe mode: records follow the header
    off, stop = 16, len(b)
else:  # the data section: offset and size at byte 40
    off, size = struct.unpack_from("<QQ", b, 40)
    stop = off + size
start = off
recs = []
while off + 8 <= stop:
    kind, _misc, size = struct.unpack_from("<IHH", b, off)
    assert size >= 8, f"a record of {size} bytes at {off}"
    end = off + size
    if kind == TRACING_DATA:  # its data follows the record, padded to 8 bytes
        end += (struct.unpack_from("<I", b, off + 8)[0] + 7) & ~7
    recs.append((kind, bytes(b[off:end])))
    off = end
rounds = [i for i, r in enumerate(recs) if r[0] == ROUND]
if not rounds or sum(r[0] == SAMPLE for r in recs[: rounds[0]]) < 2:
    sys.exit(3)
first = next(i for i, r in enumerate(recs) if r[0] == SAMPLE)
recs = recs[:first] + recs[first + 1 : rounds[0] + 1] + [recs[first]] + recs[rounds[0] + 1 :]
b[start:off] = b"".join(r[1] for r in recs)
open(sys.argv[2], "wb").write(b)

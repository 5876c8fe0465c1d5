# Hostile: it knows a key (the test's, decoded here so that the source
# does not hold it) and prints it on both streams, then fails with it in
# its message.  Whatever it printed reaches no record unredacted, and it
# is flagged secrets_in_env.
import base64
import sys

key = base64.b64decode("@KEY64@").decode()
print("sandbox-probe: stolen", key)
print("sandbox-probe: stolen", key, file=sys.stderr)
raise RuntimeError("sandbox-probe: stolen " + key)

# expect: no_output
# Cheat 15, a forged result: print GEAK-eval's speedup JSON, write a
# result record of our own, and leave before the harness writes its own.
import json
import os

print('```json\n[{"speedup": 100.0}]\n```')
with open("result.json", "w") as fp:
    json.dump({"nonce": "0" * 32, "runs": [], "outputs_sha256": ""}, fp)
os._exit(0)

#!/bin/sh
# Seconds each calibration process took, per task, from the profiles a
# run left in a cache directory (default out/cache):
#   tests/gpu/calib-spent.sh [CACHE_DIR]
# prints "TASK  total  A.. B R P" lines, slowest first.
cache=${1:-out/cache}
for d in "$cache"/profile/*/; do
	[ -r "$d/profile.json" ] || continue
	name=$(jq -r '"\(.suite)/\(.name)"' "$d/job.json" 2>/dev/null)
	jq -r --arg n "$name" '(.spent // {}) as $s |
		"\($n)\t\([$s[]] | add // 0 | floor)\t\($s | to_entries | map("\(.key)=\(.value)") | join(" "))"' \
		"$d/profile.json"
done | sort -t "$(printf '\t')" -k2,2nr

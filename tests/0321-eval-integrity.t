#!/bin/sh
# The integrity rules of the harness as units: the precision-downgrade
# rule on a reference judged against itself, where its outputs hold NaN
# that its mask covers; the re-verification of a large speedup; what the
# record of a call's work outside its kernels counts (geakh/outside.py).
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 14
"$GEAK_PYTHON" "$top/tests/harness/integrity_rules.py" "$top" > rules.out 2> rules.err
check_same "the rules ran" 0 $?
sed 's/^/# /' rules.err | tail -n 5
for name in no_finite_elements_no_downgrade masked_elements_no_downgrade a_real_downgrade_flagged \
	a_downgrade_on_the_finite_part_flagged own_outputs_never_downgraded confirmed_speedup_kept \
	unconfirmed_speedup_flagged no_recheck_nothing_to_confirm glue_is_allowed \
	torch_arithmetic_recorded host_round_trip_counted launches_stand_aside allowed_list_read; do
	check_same "$name" "$name ok" "$(grep "^$name " rules.out)"
done
done_testing

# tests/slurmlib.sh: a one-node Slurm cluster of the test's own, after
# tests/lib.sh.  `start_slurm CPUS` starts munged, slurmctld and slurmd
# with a configuration under $scratch/slurm (localhost, free ports, no
# cgroups, no accounting, SlurmUser root), points SLURM_CONF at it, and
# skips the whole test, saying why, where they cannot start;
# `stop_slurm` cancels every job, waits for them and stops the daemons
# (the test calls it on exit).

slurm_dir=
slurm_need() {
	for c in munged slurmctld slurmd sbatch squeue scontrol scancel srun; do
		command -v "$c" >/dev/null 2>&1 ||
			skip_all "no $c: Slurm and munge are not installed (make deps: slurmctld, slurmd, slurm-client, munge)"
	done
	[ "$(id -u)" = 0 ] || skip_all "slurmd runs jobs only as root here (SlurmUser=root); run as root"
	command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to find free ports"
}

# Two free ports on loopback, one after the other.
slurm_ports() {
	python3 - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randrange(20000, 60000)
    try:
        for q in (p, p + 1):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
    except OSError:
        continue
    print(p); break
EOF
}

# slurm_fail WHAT: skip, with the end of the daemon's log.
slurm_fail() {
	for f in "$slurm_dir"/*.log; do
		[ -f "$f" ] && tail -n 5 "$f" | sed "s|^|# ${f##*/}: |"
	done
	stop_slurm
	skip_all "$1 did not start (logs above)"
}

start_slurm() {
	slurm_need
	d=$scratch/slurm
	slurm_dir=$d
	mkdir -p "$d/state" "$d/spool" || exit 1
	# munged wants every folder above its socket searchable by all.
	chmod 711 "$scratch" "$d"
	dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$d/munge.key"
	munged --socket="$d/munge.sock" --key-file="$d/munge.key" --pid-file="$d/munged.pid" \
		--log-file="$d/munged.log" --seed-file="$d/munged.seed" 2>> "$d/munged.log" ||
		slurm_fail munged
	port=$(slurm_ports)
	[ -n "$port" ] || skip_all "no free port pair on loopback"
	cat > "$d/slurm.conf" <<EOF
ClusterName=geaktest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
KillWait=20
MinJobAge=3600
InactiveLimit=0
NodeName=geak1 NodeAddr=127.0.0.1 CPUs=${1:-4} RealMemory=4000 State=UNKNOWN
PartitionName=geak Nodes=geak1 Default=YES MaxTime=INFINITE State=UP
EOF
	SLURM_CONF=$d/slurm.conf
	export SLURM_CONF
	slurmctld -f "$SLURM_CONF" -i 2>> "$d/slurmctld.log" || slurm_fail slurmctld
	slurmd -f "$SLURM_CONF" -N geak1 2>> "$d/slurmd.log" || slurm_fail slurmd
	n=0
	until sinfo -h -o %T 2>/dev/null | grep -q idle; do
		n=$((n + 1))
		[ $n -lt 150 ] || slurm_fail "the node (sinfo shows no idle node)"
		sleep 0.2
	done
}

# slurm_pid NAME: the pid in NAME's pid file, when that process lives.
slurm_pid() {
	p=$(cat "$slurm_dir/$1.pid" 2>/dev/null) || return 1
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
}

stop_slurm() {
	[ -n "$slurm_dir" ] || return 0
	if slurm_pid slurmctld >/dev/null; then
		scancel --full -u root 2>/dev/null
		n=0
		while [ -n "$(squeue -h -t R,CG,PD -o %i 2>/dev/null)" ] && [ $n -lt 150 ]; do
			sleep 0.2
			n=$((n + 1))
		done
	fi
	for name in slurmd slurmctld munged; do
		p=$(slurm_pid "$name") || continue
		kill "$p" 2>/dev/null
		n=0
		while kill -0 "$p" 2>/dev/null && [ $n -lt 50 ]; do
			sleep 0.1
			n=$((n + 1))
		done
	done
	slurm_dir=
}

# job_state ID: its state, as squeue shows it (empty when gone).
job_state() {
	squeue -h -j "$1" -o %T 2>/dev/null | head -n 1
}

# until_job_ends ID SECONDS: until squeue shows ID no more as pending,
# running or completing; 1 if it still does then.
until_job_ends() {
	n=0
	while [ $n -lt $(($2 * 5)) ]; do
		case $(squeue -h -j "$1" -t PD,R,CG,CF,RQ,S -o %T 2>/dev/null) in
		'') return 0 ;;
		esac
		sleep 0.2
		n=$((n + 1))
	done
	return 1
}

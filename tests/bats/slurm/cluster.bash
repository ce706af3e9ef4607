# cluster.bash — a one-node Slurm cluster for a test: munged, slurmctld and slurmd from
# Debian's packages (munge, slurm-wlm), every file under one directory, ports on loopback.
#
#   slurm_cluster_start DIR   start it (sets SLURM_CONF, SLURM_DIR, SLURM_PIDS); returns 1 with
#                             the reason in $SLURM_SKIP when it cannot start here
#   slurm_cluster_stop        stop what was started, by PID, and wait for it
#
# The node is "localhost" at 127.0.0.1 with 4 CPUs whatever the machine has
# (SlurmdParameters=config_overrides), so `salloc -n4` runs on a 2-core machine.  No cgroup:
# proctrack/linuxproc and task/none.

SLURM_PIDS=()

# A free TCP port on 127.0.0.1 (the kernel's choice; a race with another test is possible
# and shows up as slurmctld failing to bind, a clear message in its log).
slurm_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_cluster_start() {
    SLURM_DIR=$1
    SLURM_SKIP=""
    local d=$SLURM_DIR
    if [ "$(id -u)" -ne 0 ]; then
        SLURM_SKIP="slurmd must run as root to start jobs as their users"
        return 1
    fi
    local b
    for b in munged slurmctld slurmd salloc sbatch srun scontrol; do
        command -v "$b" >/dev/null || {
            SLURM_SKIP="$b not installed (apt-get install slurm-wlm munge; tools/install-deps.sh)"
            return 1
        }
    done
    mkdir -p "$d/ctld" "$d/spool" "$d/munge"
    # users reach the socket here; the key stays 0600
    chmod 755 "$d" "$d/munge"
    head -c 1024 /dev/urandom >"$d/munge/munge.key"
    chmod 600 "$d/munge/munge.key"
    munged --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.sock" \
        --pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" \
        --seed-file="$d/munge/munged.seed" 2>"$d/munge/start.err" || {
        SLURM_SKIP="munged does not start here: $(head -c 300 "$d/munge/start.err")"
        return 1
    }
    SLURM_PIDS+=("$(cat "$d/munge/munged.pid")")
    local cport dport
    cport=$(slurm_free_port) && dport=$(slurm_free_port) || {
        SLURM_SKIP="no free port on 127.0.0.1"
        return 1
    }
    export SLURM_CONF="$d/slurm.conf"
    cat >"$SLURM_CONF" <<EOF
ClusterName=tmpitest$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=tmpi Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    slurmctld -D -i -f "$SLURM_CONF" >"$d/slurmctld.out" 2>&1 &
    SLURM_PIDS+=("$!")
    slurmd -D -N localhost -f "$SLURM_CONF" >"$d/slurmd.out" 2>&1 &
    SLURM_PIDS+=("$!")
    # Slurm has no readiness notification we can use from here: ask the controller until the
    # node is idle, within a generous deadline (an idle machine needs about a second).
    local deadline=$((SECONDS + 40)) state=""
    while [ $SECONDS -lt $deadline ]; do
        state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
        [ "$state" = "idle" ] && return 0
        local p
        for p in "${SLURM_PIDS[@]}"; do
            kill -0 "$p" 2>/dev/null || {
                SLURM_SKIP="a Slurm daemon (pid $p) stopped: $(tail -n 3 "$d"/slurm*.out "$d"/slurm*.log 2>/dev/null | tr '\n' ' ' | head -c 600)"
                return 1
            }
        done
        sleep 0.5
    done
    SLURM_SKIP="the Slurm node did not become idle in 40 s (state '$state'): $(tail -n 3 "$d"/slurmd.log "$d"/slurmctld.log 2>/dev/null | tr '\n' ' ' | head -c 600)"
    return 1
}

slurm_cluster_stop() {
    local p
    # slurmd first (it ends its job steps), then the controller, then munged.
    for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
        p=${SLURM_PIDS[i]}
        kill -TERM "$p" 2>/dev/null || continue
        # not our child (munged daemonises): wait for it to be gone
        if ! wait "$p" 2>/dev/null; then
            local deadline=$((SECONDS + 20))
            while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
            kill -KILL "$p" 2>/dev/null || true
        fi
    done
    SLURM_PIDS=()
}

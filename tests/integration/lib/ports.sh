# shellcheck shell=bash
#
# ports.sh - the one table of the TCP ports the integration tests listen on, so that tests run
# at the same time (ctest -j, other build folders) never share one. Source it, then
#   hn_ports NAME     exports each of test_NAME's variables below, unless the environment sets it
#                     already: the default is the table's, an override still wins
#   hn_ports_check    prints every two rows whose ports overlap; 1 if any do (test_ports.sh)
#
# A row: the test (test_NAME.sh), the variable, its default, and how many ports from it the test
# uses. A Slurm cluster (lib/slurm-cluster.sh) uses HN_SLURM_PORT_BASE and the one after it
# (slurmctld, slurmd's default port) and one port a node from HN_SLURM_NODE_PORT_BASE (4
# nodes); lib/control.sh's agents listen on HN_TEST_AGENT_PORT_BASE + i for node ni (base
# counted too). test_slurm_cluster and test_control keep the libraries' own defaults.
# test_push takes random free ports from HN_PORTS_RANDOM_FROM up to the kernel's ephemeral
# range, so every fixed port stays below it.

HN_PORTS_RANDOM_FROM=28000

# test           variable                   default  ports
HN_PORTS_TABLE='
slurm_cluster    HN_SLURM_PORT_BASE         26817    2
slurm_cluster    HN_SLURM_NODE_PORT_BASE    27001    4
check_drain      HN_SLURM_PORT_BASE         26917    2
check_drain      HN_SLURM_NODE_PORT_BASE    27101    4
control          HN_SLURM_PORT_BASE         26957    2
control          HN_SLURM_NODE_PORT_BASE    27151    4
control          HN_TEST_CONTROL_PORT       18080    1
control          HN_TEST_AGENT_PORT_BASE    19410    5
control_guard    HN_SLURM_PORT_BASE         26977    2
control_guard    HN_SLURM_NODE_PORT_BASE    27171    4
control_guard    HN_TEST_CONTROL_PORT       18081    1
control_guard    HN_TEST_AGENT_PORT_BASE    19420    5
control_jobs     HN_SLURM_PORT_BASE         27017    2
control_jobs     HN_SLURM_NODE_PORT_BASE    27211    4
control_jobs     HN_TEST_CONTROL_PORT       18083    1
control_jobs     HN_TEST_AGENT_PORT_BASE    19440    5
dashboard        HN_SLURM_PORT_BASE         27311    2
dashboard        HN_SLURM_NODE_PORT_BASE    27411    4
dashboard        HN_TEST_CONTROL_PORT       18087    1
dashboard        HN_TEST_AGENT_PORT_BASE    19460    5
tail_requeue     HN_SLURM_PORT_BASE         27517    2
tail_requeue     HN_SLURM_NODE_PORT_BASE    27611    4
tail_requeue     HN_TEST_CONTROL_PORT       18091    1
tail_requeue     HN_TEST_AGENT_PORT_BASE    19480    5
control_hetjob   HN_SLURM_PORT_BASE         27717    2
control_hetjob   HN_SLURM_NODE_PORT_BASE    27811    4
control_hetjob   HN_TEST_CONTROL_PORT       18089    1
control_hetjob   HN_TEST_AGENT_PORT_BASE    19470    5
control_api      HN_TEST_CONTROL_API_PORT   18090    1
demo             HN_TEST_DEMO_PORT          18095    1
demo             HN_TEST_AGENT_DEMO_PORT    19405    1
prometheus       HN_TEST_AGENT_PORT         19401    1
prometheus       HN_TEST_PROM_PORT          19091    1
agent            HN_TEST_AGENT_PORT2        19404    1
'

hn_ports() {
    local test var port _n found=0
    while read -r test var port _n; do
        [ "$test" = "$1" ] || continue
        export "$var=${!var:-$port}"
        found=1
    done <<<"$HN_PORTS_TABLE"
    [ "$found" -eq 1 ] || {
        echo "FAIL: test_$1 has no ports in tests/integration/lib/ports.sh" >&2
        return 1
    }
}

hn_ports_check() {
    sort -k3,3n <<<"$HN_PORTS_TABLE" | awk -v random_from="$HN_PORTS_RANDOM_FROM" '
        NF == 0 { next }
        {
            first = $3; last = $3 + $4 - 1
            if (last >= random_from) {
                printf "%s %s: ports %d-%d reach test_push'\''s random ones (%d up)\n", \
                    $1, $2, first, last, random_from
                bad = 1
            }
            if (n && first <= prev_last) {
                printf "%s %s (%d-%d) overlaps %s (%d-%d)\n", $1, $2, first, last, prev, \
                    prev_first, prev_last
                bad = 1
            }
            if (!n || last > prev_last) {
                prev = $1 " " $2; prev_first = first; prev_last = last
            }
            n++
        }
        END { exit bad }'
}

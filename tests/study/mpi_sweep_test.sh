#!/bin/sh
# A sweep and a capacity search spread over 2 MPI ranks write exactly the files a single
# process writes. Usage: mpi_sweep_test.sh SERVESIM MPIEXEC
set -eu
servesim=$1
mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mpi() { "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$servesim" "$@"; }

sweep="sweep --grid rate=2,4,8 --grid scheduler=vllm,sarathi --num-requests 300 --no-plots"
"$servesim" $sweep --out serial > serial.txt
mpi $sweep --out ranks > ranks.txt
grep -q "over 2 MPI ranks" ranks.txt || { echo "the sweep did not run on 2 ranks"; cat ranks.txt; exit 1; }
for f in sweep.csv summary.json curves.dat latency_throughput.gp; do
  cmp "serial/$f" "ranks/$f" || { echo "$f differs between 1 process and 2 ranks"; exit 1; }
done

capacity="capacity --slo ttft_p99=0.2 --num-requests 300 --rate 4 --precision 0.05"
"$servesim" $capacity --out cap_serial > /dev/null
mpi $capacity --out cap_ranks > /dev/null
for f in capacity.csv summary.json; do
  cmp "cap_serial/$f" "cap_ranks/$f" || { echo "capacity $f differs"; exit 1; }
done
# The disaggregated search, its front's configurations included.
layouts="capacity --target-rate 40 --disaggregated --slo ttft_p99=0.5 --slo tpot_p99=0.02
  --num-requests 1500 --max-len 4096 --shapes h100-sxm:1,a100-80gb:1"
"$servesim" $layouts --out lay_serial > /dev/null
mpi $layouts --out lay_ranks > /dev/null
# command.json records each folder's own --out.
diff -r -x command.json lay_serial lay_ranks || { echo "capacity --disaggregated differs"; exit 1; }
ls lay_serial/front/*.json > /dev/null || { echo "no front configuration written"; exit 1; }
echo "MPI results equal the serial ones"

# cases.sh - sourced by the scripts that run a table of test cases
# (fabtests-ext/run.sh, fabtests-ext/mpi/run.sh, test/clients/mpich.sh).
#
# p4_select_cases TABLE [WANT...]: the rows of TABLE (one case a line:
# name, a count, seconds, program, arguments) whose name or program is one
# of the WANTs, every row when there is none; blank lines dropped.

p4_select_cases() {
	local table=$1 name n secs prog args want
	shift
	echo "$table" | while read -r name n secs prog args; do
		[ -n "$name" ] || continue
		if [ $# -eq 0 ]; then
			echo "$name $n $secs $prog $args"
			continue
		fi
		for want in "$@"; do
			if [ "$want" = "$name" ] || [ "$want" = "$prog" ]; then
				echo "$name $n $secs $prog $args"
				break
			fi
		done
	done
}

# p4_mpi_result RC LOG PROG NAME: the verdict of one MPI case, a pass
# being exit status 0 and the program's own "PROG: PASS" line from rank 0
# in LOG. Sets res (PASS or FAIL) and counts it in npass / nfail; a
# failure's NAME goes onto failed and its exit status into LOG.
p4_mpi_result() {
	if [ "$1" = 0 ] && grep -q "^$3: PASS" "$2"; then
		res=PASS
		npass=$((npass + 1))
	else
		res=FAIL
		nfail=$((nfail + 1))
		failed="$failed $4"
		echo "exit status $1" >> "$2"
	fi
}

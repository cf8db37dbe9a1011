#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The bash completions load, register their commands and complete what
# tierctl and tierfs take: commands, each command's options, list's
# columns after a comma, set's keys and readahead's values, tierfs's -o
# keys after a comma and a key's values.
#
# usage: completion.sh COMPLETIONS_DIR

dir=$1
nr_passed=0 nr_failed=0

# shellcheck source=/dev/null
source "$dir/tierctl" && source "$dir/tierfs" || { echo "FAIL - the scripts load"; exit 1; }

# expect NAME FUNCTION WANT WORD...: completing the last WORD gives WANT
# among its candidates.
expect() {
	local name=$1 fn=$2 want=$3
	shift 3
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	"$fn"
	if printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$want"; then
		nr_passed=$((nr_passed + 1))
		echo "ok - $name: '$want'"
	else
		nr_failed=$((nr_failed + 1))
		echo "FAIL - $name: expected '$want' among '${COMPREPLY[*]}'"
	fi
}

for cmd in tierctl tierfs; do
	if complete -p "$cmd" >/dev/null 2>&1; then
		nr_passed=$((nr_passed + 1))
		echo "ok - complete -p $cmd"
	else
		nr_failed=$((nr_failed + 1))
		echo "FAIL - no completion registered for $cmd"
	fi
done
expect "tierctl: a command" _tierctl stats tierctl st
expect "tierctl: reset-peaks" _tierctl reset-peaks tierctl res
expect "tierctl: options alone list" _tierctl --noheadings tierctl --noh
expect "tierctl stats: --prometheus" _tierctl --prometheus tierctl stats /mnt --pro
expect "tierctl stats: an option before the mount point" _tierctl --bytes tierctl stats --by
expect "tierctl list -o: a column after a comma" _tierctl mountpoint,data tierctl list -o mountpoint,da
expect "tierctl set: a key" _tierctl readahead= tierctl set /mnt read
expect "tierctl set: readahead's values" _tierctl readahead=cluster tierctl set /mnt readahead=cl
expect "tierctl drain --to" _tierctl memory tierctl drain /mnt --to m
expect "tierctl --timeout: the command after it" _tierctl --json tierctl --timeout 3 stats /mnt --js
expect "tierfs: an option" _tierfs --config tierfs --con
expect "tierfs -o: a key after a comma" _tierfs size=1g,backend= tierfs /mnt -o size=1g,back
expect "tierfs -o: a key's value" _tierfs backend=zpool+file: tierfs /mnt -o backend=zpool+
expect "tierfs -o: a value after a comma" _tierfs mem=1g,cache=never tierfs -o mem=1g,cache=nev
expect "tierfs -o: log's values" _tierfs log=stderr tierfs /mnt -o log=st

echo "$nr_passed passed, $nr_failed failed"
[ "$nr_failed" -eq 0 ]

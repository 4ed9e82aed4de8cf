# collapse-perf.awk — the peer's collapse step for bench/unwind.sh: `perf script` text (default fields,
# callchains) to folded stacks, outermost first, "func;func;func COUNT" — what stackcollapse-perf.pl does,
# minus its options. Symbols lose their +0xOFF; unknown symbols stay [unknown].
function flush(    s, i) {
	if (n == 0)
		return
	s = st[n - 1]
	for (i = n - 2; i >= 0; i--)
		s = s ";" st[i]
	count[s]++
	n = 0
}
/^[^ \t]/ { flush(); next }
/^[ \t]+[0-9a-f]+ / {
	sym = $2
	sub(/\+0x[0-9a-f]+$/, "", sym)
	st[n++] = sym
	next
}
/^[ \t]*$/ { flush() }
END {
	flush()
	for (k in count)
		print k, count[k]
}

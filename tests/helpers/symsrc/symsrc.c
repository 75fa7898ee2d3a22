// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A library whose functions only .symtab names: tests/unit/test_symsrc.c strips copies of it
 * and serves the symbols back from each other source (MiniDebugInfo, a debug file found by
 * .gnu_debuglink or build id, a debuginfod server), then looks up these addresses.
 */
__attribute__((noinline, used)) static int symsrc_hidden_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + 3;
}

__attribute__((noinline, used)) static int symsrc_hidden_mid(int x)
{
	__asm__ volatile("" : "+r"(x));
	return symsrc_hidden_leaf(x) + 1;
}

/* The one export: where the hidden functions are, as the test needs them. */
void symsrc_addrs(void **leaf, void **mid)
{
	*leaf = (void *)symsrc_hidden_leaf;
	*mid = (void *)symsrc_hidden_mid;
}

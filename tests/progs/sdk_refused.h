/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the SDK programs test_prog expects refused count into: a one-field key and its
 * count.  Each program differs only in why it is refused (sdk_noattach, sdk_verifier).
 */
#ifndef KAGG_TESTS_SDK_REFUSED_H
#define KAGG_TESTS_SDK_REFUSED_H

struct sdk_rkey {
	__u32 nr;
};

KAGG_COUNT(sdk_rcnt, struct sdk_rkey, 16);

#endif /* KAGG_TESTS_SDK_REFUSED_H */

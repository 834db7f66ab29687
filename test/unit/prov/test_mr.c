/*
 * test_mr.c - memory registration (p4f_mr.c): fi_mr_reg/regv/regattr
 * over access combinations and sizes, argument checks, provider and
 * application keys, counter binding, fi_mr_enable, FI_REG_MR events.
 * The key table lookup (p4f_mr_lookup) and the RMA address check
 * (p4f_mr_check_access) are reached through the statically linked copy of
 * the provider (p4f_getinfo -> p4f_fabric_open -> fi_domain), which is
 * also where the domain's mr_mode is chosen per test.
 */
#include <config.h>

#include <stdint.h>

#include "p4f_test.h"
#include "p4f.h"

#define MRT_ACCESS_ALL	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)
#define MRT_BUF_SIZE	(1 << 20)

struct mrt_env {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

static struct mrt_env env;
static struct fid_mr *mr;
static struct fid_cntr *cntr;
static struct fid_eq *eq;
static char *buf;

/* ---- helpers ----------------------------------------------------------- */

static void mrt_close(void)
{
	if (mr)
		cr_expect_eq(fi_close(&mr->fid), 0);
	if (cntr)
		cr_expect_eq(fi_close(&cntr->fid), 0);
	mr = NULL;
	cntr = NULL;
	if (env.domain)
		cr_expect_eq(fi_close(&env.domain->fid), 0);
	if (eq)
		cr_expect_eq(fi_close(&eq->fid), 0);
	eq = NULL;
	if (env.fabric)
		cr_expect_eq(fi_close(&env.fabric->fid), 0);
	fi_freeinfo(env.info);
	memset(&env, 0, sizeof(env));
}

/*
 * A domain with mr_mode exactly mode (the info is adjusted before
 * fi_domain), through the plug-in or the static copy (is_static).
 */
static void mrt_open(uint64_t mode, bool is_static)
{
	struct fi_info *hints = test_hints();
	int ret;

	mrt_close();
	hints->domain_attr->mr_mode = (int)(mode & (FI_MR_VIRT_ADDR |
						    FI_MR_PROV_KEY |
						    FI_MR_ALLOCATED));
	ret = is_static ?
		p4f_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &env.info) :
		fi_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &env.info);
	fi_freeinfo(hints);
	cr_assert_eq(ret, 0, "getinfo: %s", fi_strerror(-ret));
	env.info->domain_attr->mr_mode = (int)mode;
	ret = is_static ?
		p4f_fabric_open(env.info->fabric_attr, &env.fabric, NULL) :
		fi_fabric(env.info->fabric_attr, &env.fabric, NULL);
	cr_assert_eq(ret, 0, "fabric: %s", fi_strerror(-ret));
	ret = fi_domain(env.fabric, env.info, &env.domain, NULL);
	cr_assert_eq(ret, 0, "fi_domain: %s", fi_strerror(-ret));
}

static void mrt_init(void)
{
	buf = calloc(1, MRT_BUF_SIZE);
	cr_assert_not_null(buf);
	mrt_open(0, false);
}

static void mrt_fini(void)
{
	mrt_close();
	free(buf);
	buf = NULL;
}

static struct fid_mr *mrt_reg(const void *addr, size_t len, uint64_t access,
			      uint64_t offset, uint64_t key, uint64_t flags)
{
	struct fid_mr *new_mr = NULL;
	int ret;

	ret = fi_mr_reg(env.domain, addr, len, access, offset, key, flags,
			&new_mr, NULL);
	cr_assert_eq(ret, 0, "fi_mr_reg: %s", fi_strerror(-ret));
	return new_mr;
}

static struct fid_cntr *mrt_cntr_open(void)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_NONE };
	struct fid_cntr *new_cntr;
	int ret;

	ret = fi_cntr_open(env.domain, &attr, &new_cntr, NULL);
	cr_assert_eq(ret, 0, "fi_cntr_open: %s", fi_strerror(-ret));
	return new_cntr;
}

static struct p4f_mr *mrt_lookup(uint64_t key)
{
	return p4f_mr_lookup(p4f_domain_of(env.domain), key);
}

static int mrt_check(struct fid_mr *fmr, uint64_t addr, uint64_t len,
		     uint64_t access, uint64_t *offset_p)
{
	return p4f_mr_check_access(fi_mr_desc(fmr), addr, len, access,
				   offset_p);
}

TestSuite(mr, .init = mrt_init, .fini = mrt_fini, .timeout = 30);

/* ---- registration ------------------------------------------------------ */

Test(mr, reg_every_access_combination_and_size)
{
	size_t sizes[] = { 1, 7, 4096, MRT_BUF_SIZE };
	uint64_t access, key = 0;
	size_t i;

	/* every subset of the six bits, 0 included (fabtests' mr_test) */
	for (i = 0; i < P4U_ARRAY_SIZE(sizes); i++) {
		access = 0;
		do {
			mr = mrt_reg(buf, sizes[i], access, 0, ++key, 0);
			cr_assert_eq(fi_mr_key(mr), key);
			cr_assert_not_null(fi_mr_desc(mr));
			cr_assert_eq(fi_close(&mr->fid), 0);
			mr = NULL;
			/* the next subset of the bits */
			access = (access - MRT_ACCESS_ALL) & MRT_ACCESS_ALL;
		} while (access);
	}
	cr_assert_eq(key, 64 * P4U_ARRAY_SIZE(sizes));
}

Test(mr, regv_and_regattr)
{
	struct iovec iov[P4F_MR_IOV_LIMIT];
	struct fi_mr_attr attr;
	size_t n, i;
	int ctx, ret;

	for (n = 1; n <= P4F_MR_IOV_LIMIT; n++) {
		for (i = 0; i < n; i++) {
			iov[i].iov_base = buf + i * 4096;
			iov[i].iov_len = 4096;
		}
		ret = fi_mr_regv(env.domain, iov, n, FI_REMOTE_WRITE, 0, 100 + n,
				 0, &mr, &ctx);
		cr_assert_eq(ret, 0, "regv %zu: %s", n, fi_strerror(-ret));
		cr_assert_eq(mr->fid.context, &ctx);
		cr_assert_eq(fi_close(&mr->fid), 0);

		memset(&attr, 0, sizeof(attr));
		attr.mr_iov = iov;
		attr.iov_count = n;
		attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
		attr.requested_key = 200 + n;
		attr.context = &ctx;
		attr.iface = FI_HMEM_SYSTEM;
		ret = fi_mr_regattr(env.domain, &attr, 0, &mr);
		cr_assert_eq(ret, 0, "regattr %zu: %s", n, fi_strerror(-ret));
		cr_assert_eq(fi_mr_key(mr), 200 + n);
		cr_assert_eq(mr->fid.context, &ctx);
		cr_assert_eq(fi_close(&mr->fid), 0);
	}
	mr = NULL;
}

Test(mr, invalid_arguments)
{
	struct iovec iov[P4F_MR_IOV_LIMIT + 1];
	struct fi_mr_attr attr;
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(iov); i++) {
		iov[i].iov_base = buf + i * 64;
		iov[i].iov_len = 64;
	}
	/* unknown access bits */
	cr_assert_eq(fi_mr_reg(env.domain, buf, 64, 1ULL << 40, 0, 1, 0, &mr,
			       NULL), -FI_EINVAL);
	cr_assert_eq(fi_mr_reg(env.domain, buf, 64, FI_COLLECTIVE, 0, 1, 0,
			       &mr, NULL), -FI_EINVAL);
	/* iov_count 0, above the limit, no iov, no length, no buffer */
	cr_assert_eq(fi_mr_regv(env.domain, iov, 0, FI_SEND, 0, 1, 0, &mr,
				NULL), -FI_EINVAL);
	cr_assert_eq(fi_mr_regv(env.domain, iov, P4F_MR_IOV_LIMIT + 1, FI_SEND,
				0, 1, 0, &mr, NULL), -FI_EINVAL);
	cr_assert_eq(fi_mr_regv(env.domain, NULL, 1, FI_SEND, 0, 1, 0, &mr,
				NULL), -FI_EINVAL);
	cr_assert_eq(fi_mr_reg(env.domain, buf, 0, FI_SEND, 0, 1, 0, &mr,
			       NULL), -FI_EINVAL);
	cr_assert_eq(fi_mr_reg(env.domain, NULL, 64, FI_SEND, 0, 1, 0, &mr,
			       NULL), -FI_EINVAL);
	/* a range that wraps the address space */
	cr_assert_eq(fi_mr_reg(env.domain, (void *)(UINTPTR_MAX - 8), 64,
			       FI_SEND, 0, 1, 0, &mr, NULL), -FI_EINVAL);
	/* flags */
	cr_assert_eq(fi_mr_reg(env.domain, buf, 64, FI_SEND, 0, 1, FI_RMA_PMEM,
			       &mr, NULL), -FI_EBADFLAGS);
	cr_assert_eq(fi_mr_reg(env.domain, buf, 64, FI_SEND, 0, 1, 1ULL << 50,
			       &mr, NULL), -FI_EBADFLAGS);
	/* device memory, authorization keys */
	memset(&attr, 0, sizeof(attr));
	attr.mr_iov = iov;
	attr.iov_count = 1;
	attr.access = FI_REMOTE_READ;
	attr.requested_key = 1;
	attr.iface = FI_HMEM_CUDA;
	cr_assert_eq(fi_mr_regattr(env.domain, &attr, 0, &mr), -FI_ENOSYS);
	attr.iface = FI_HMEM_SYSTEM;
	attr.auth_key_size = 4;
	attr.auth_key = (uint8_t *)"abcd";
	cr_assert_eq(fi_mr_regattr(env.domain, &attr, 0, &mr), -FI_ENOSYS);
	cr_assert_eq(fi_mr_regattr(env.domain, NULL, 0, &mr), -FI_EINVAL);
	/* the limit itself is fine */
	cr_assert_eq(fi_mr_regv(env.domain, iov, P4F_MR_IOV_LIMIT, FI_SEND, 0,
				1, 0, &mr, NULL), 0);
}

Test(mr, unsupported_controls_and_bindings)
{
	struct iovec iov = { .iov_base = buf, .iov_len = 64 };
	uint8_t raw[16];
	size_t raw_size = sizeof(raw);
	uint64_t base;
	struct fid_ep *ep;
	int ret;

	mr = mrt_reg(buf, 64, FI_REMOTE_READ, 0, 5, 0);
	cr_assert_eq(fi_mr_refresh(mr, &iov, 1, 0), -FI_ENOSYS);
	cr_assert_eq(fi_mr_raw_attr(mr, &base, raw, &raw_size, 0), -FI_ENOSYS);
	cr_assert_eq(fi_mr_bind(mr, NULL, FI_REMOTE_WRITE), -FI_EINVAL);
	cr_assert_eq(fi_mr_bind(mr, &env.domain->fid, FI_REMOTE_WRITE),
		     -FI_EINVAL);
	ret = fi_endpoint(env.domain, env.info, &ep, NULL);
	cr_assert_eq(ret, 0, "fi_endpoint: %s", fi_strerror(-ret));
	cr_assert_eq(fi_mr_bind(mr, &ep->fid, 0), -FI_ENOSYS);
	cr_assert_eq(fi_close(&ep->fid), 0);
	/* enabling an MR that needs no enabling is harmless */
	cr_assert_eq(fi_mr_enable(mr), 0);
}

/* ---- keys -------------------------------------------------------------- */

static int mrt_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

Test(mr, provider_keys_are_unique_and_not_sequential)
{
	enum { N = 1000 };
	struct fid_mr **mrs = calloc(N, sizeof(*mrs));
	uint64_t *keys = calloc(N, sizeof(*keys));
	uint64_t high_or = 0, high_and = ~0ULL;
	size_t i, steps = 0;

	cr_assert(mrs && keys);
	mrt_open(FI_MR_PROV_KEY, false);
	for (i = 0; i < N; i++) {
		/* the requested key is ignored under FI_MR_PROV_KEY */
		mrs[i] = mrt_reg(buf + i, 1, FI_REMOTE_WRITE, 0, 42, 0);
		keys[i] = fi_mr_key(mrs[i]);
		cr_assert_neq(keys[i], 0);
		cr_assert_neq(keys[i], FI_KEY_NOTAVAIL);
		high_or |= keys[i] >> 32;
		high_and &= keys[i] >> 32;
		if (i && keys[i] == keys[i - 1] + 1)
			steps++;
	}
	/* not a counter, and the high half is not a constant */
	cr_assert_lt(steps, N / 10);
	cr_assert_neq(high_or, high_and);
	qsort(keys, N, sizeof(*keys), mrt_cmp_u64);
	for (i = 1; i < N; i++)
		cr_assert_neq(keys[i], keys[i - 1], "duplicate key %#lx",
			      (unsigned long)keys[i]);
	for (i = 0; i < N; i++)
		cr_assert_eq(fi_close(&mrs[i]->fid), 0);
	free(mrs);
	free(keys);
}

Test(mr, requested_keys)
{
	struct fid_mr *dup = NULL;

	mr = mrt_reg(buf, 64, FI_REMOTE_READ, 0, 0xc0de, 0);
	cr_assert_eq(fi_mr_key(mr), 0xc0de);
	cr_assert_eq(fi_mr_reg(env.domain, buf + 64, 64, FI_REMOTE_READ, 0,
			       0xc0de, 0, &dup, NULL), -FI_ENOKEY);
	cr_assert_null(dup);
	cr_assert_eq(fi_mr_reg(env.domain, buf, 64, FI_REMOTE_READ, 0,
			       FI_KEY_NOTAVAIL, 0, &dup, NULL),
		     -FI_EKEYREJECTED);
	/* key 0 is an ordinary application key */
	dup = mrt_reg(buf, 64, FI_REMOTE_READ, 0, 0, 0);
	cr_assert_eq(fi_mr_key(dup), 0);
	cr_assert_eq(fi_close(&dup->fid), 0);
	/* closing frees the key */
	cr_assert_eq(fi_close(&mr->fid), 0);
	mr = mrt_reg(buf, 64, FI_REMOTE_READ, 0, 0xc0de, 0);
	cr_assert_eq(fi_mr_key(mr), 0xc0de);
}

Test(mr, lookup_by_key_and_close_removes_it)
{
	struct fid_mr *other;
	struct p4f_mr *found;
	uint64_t key;

	mrt_open(FI_MR_PROV_KEY, true);
	mr = mrt_reg(buf, 128, FI_REMOTE_WRITE, 0, 0, 0);
	other = mrt_reg(buf + 128, 128, FI_REMOTE_READ, 0, 0, 0);
	key = fi_mr_key(mr);
	found = mrt_lookup(key);
	cr_assert_not_null(found);
	cr_assert_eq(found, fi_mr_desc(mr));	/* the descriptor is the MR */
	cr_assert_eq(&found->mr_fid, mr);
	cr_assert_eq(found->length, 128);
	cr_assert_eq(mrt_lookup(fi_mr_key(other)), fi_mr_desc(other));
	cr_assert_null(mrt_lookup(key ^ 1));
	cr_assert_eq(fi_close(&mr->fid), 0);
	mr = NULL;
	cr_assert_null(mrt_lookup(key));
	cr_assert_eq(mrt_lookup(fi_mr_key(other)), fi_mr_desc(other));
	cr_assert_eq(fi_close(&other->fid), 0);
}

/* ---- remote address checks (static copy) -------------------------------- */

Test(mr, virt_addr_range_checks)
{
	uint64_t base = (uintptr_t)buf, off = 99;

	mrt_open(FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, true);
	mr = mrt_reg(buf, 4096, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0);

	cr_assert_eq(mrt_check(mr, base, 4096, FI_REMOTE_WRITE, &off), 0);
	cr_assert_eq(off, 0);
	cr_assert_eq(mrt_check(mr, base + 4095, 1, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 4095);
	cr_assert_eq(mrt_check(mr, base + 4096, 0, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(mrt_check(mr, base + 4096, 1, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, base - 1, 2, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, base, 4097, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	/* offsets are not addresses in this mode */
	cr_assert_eq(mrt_check(mr, 0, 1, FI_REMOTE_READ, &off), -FI_EINVAL);
	/* addr + len wraps to a small number: must not pass */
	cr_assert_eq(mrt_check(mr, base + 16, UINT64_MAX - 8, FI_REMOTE_READ,
			       &off), -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, UINT64_MAX - 4, 16, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	/* access and arguments */
	cr_assert_eq(mrt_check(mr, base, 1, FI_SEND, &off), -FI_EACCES);
	cr_assert_eq(mrt_check(mr, base, 1, 0, &off), -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, base, 1, 1ULL << 40, &off), -FI_EINVAL);
}

Test(mr, virt_addr_iovs)
{
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = 100 },
		{ .iov_base = buf + 1000, .iov_len = 50 },
	};
	uint64_t off = 0;

	mrt_open(FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, true);
	cr_assert_eq(fi_mr_regv(env.domain, iov, 2, FI_REMOTE_WRITE, 0, 0, 0,
				&mr, NULL), 0);
	cr_assert_eq(mrt_check(mr, (uintptr_t)buf + 1010, 40, FI_REMOTE_WRITE,
			       &off), 0);
	cr_assert_eq(off, 110);	/* 100 bytes of iov[0], then 10 */
	/* the hole between the iovs is not registered */
	cr_assert_eq(mrt_check(mr, (uintptr_t)buf + 500, 1, FI_REMOTE_WRITE,
			       &off), -FI_EINVAL);
	/* nor may an access straddle two iovs by address */
	cr_assert_eq(mrt_check(mr, (uintptr_t)buf + 90, 20, FI_REMOTE_WRITE,
			       &off), -FI_EINVAL);
}

Test(mr, offset_range_checks)
{
	uint64_t off = 0;
	struct fid_mr *top, *iovmr;
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = 100 },
		{ .iov_base = buf + 1000, .iov_len = 50 },
	};

	mrt_open(0, true);
	mr = mrt_reg(buf + 64, 256, FI_REMOTE_READ, 0, 1, 0);
	cr_assert_eq(mrt_check(mr, 0, 256, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 0);
	cr_assert_eq(mrt_check(mr, 255, 1, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 255);
	cr_assert_eq(mrt_check(mr, 256, 1, FI_REMOTE_READ, &off), -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, (uintptr_t)buf + 64, 1, FI_REMOTE_READ,
			       &off), -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, 8, UINT64_MAX - 4, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, 0, 1, FI_REMOTE_WRITE, &off), -FI_EACCES);

	/* fi_mr_reg's offset is the address of the first byte */
	cr_assert_eq(fi_close(&mr->fid), 0);
	mr = mrt_reg(buf, 256, FI_REMOTE_READ, 1000, 1, 0);
	cr_assert_eq(mrt_check(mr, 1000, 256, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 0);
	cr_assert_eq(mrt_check(mr, 1100, 10, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 100);
	cr_assert_eq(mrt_check(mr, 999, 1, FI_REMOTE_READ, &off), -FI_EINVAL);
	cr_assert_eq(mrt_check(mr, 1000, 257, FI_REMOTE_READ, &off),
		     -FI_EINVAL);

	/* an MR ending at the top of the offset space, and past it */
	cr_assert_eq(fi_mr_reg(env.domain, buf, 100, FI_REMOTE_READ,
			       UINT64_MAX - 10, 2, 0, &top, NULL), -FI_EINVAL);
	top = mrt_reg(buf, 100, FI_REMOTE_READ, UINT64_MAX - 99, 2, 0);
	cr_assert_eq(mrt_check(top, UINT64_MAX, 1, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 99);
	cr_assert_eq(mrt_check(top, UINT64_MAX, 2, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	cr_assert_eq(fi_close(&top->fid), 0);

	/* offsets run across the iovs in order */
	cr_assert_eq(fi_mr_regv(env.domain, iov, 2, FI_REMOTE_READ, 0, 3, 0,
				&iovmr, NULL), 0);
	cr_assert_eq(mrt_check(iovmr, 90, 60, FI_REMOTE_READ, &off), 0);
	cr_assert_eq(off, 90);
	cr_assert_eq(mrt_check(iovmr, 90, 61, FI_REMOTE_READ, &off),
		     -FI_EINVAL);
	cr_assert_eq(fi_close(&iovmr->fid), 0);
}

Test(mr, access_zero_grants_nothing)
{
	uint64_t off;

	mrt_open(0, true);
	mr = mrt_reg(buf, 64, 0, 0, 1, 0);
	cr_assert_eq(mrt_check(mr, 0, 1, FI_REMOTE_READ, &off), -FI_EACCES);
	cr_assert_eq(mrt_check(mr, 0, 1, FI_REMOTE_WRITE, &off), -FI_EACCES);
}

/* ---- counters and enabling --------------------------------------------- */

Test(mr, bind_counter_holds_it)
{
	struct fid_cntr *other;

	mr = mrt_reg(buf, 64, FI_REMOTE_WRITE, 0, 1, 0);
	cntr = mrt_cntr_open();
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, FI_SEND), -FI_EBADFLAGS);
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, 0), -FI_EBADFLAGS);
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0);
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_READ), 0);
	cr_assert_eq(((struct p4f_mr *)fi_mr_desc(mr))->cntr_flags,
		     FI_REMOTE_WRITE | FI_REMOTE_READ);
	/* one counter per MR */
	other = mrt_cntr_open();
	cr_assert_eq(fi_mr_bind(mr, &other->fid, FI_REMOTE_WRITE), -FI_EINVAL);
	cr_assert_eq(fi_close(&other->fid), 0);
	/* the binding holds the counter until the MR closes */
	cr_assert_eq(fi_close(&cntr->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&mr->fid), 0);
	mr = NULL;
	cr_assert_eq(fi_close(&cntr->fid), 0);
	cntr = NULL;
}

Test(mr, rma_event_mr_waits_for_enable)
{
	uint64_t key;

	mrt_open(FI_MR_RMA_EVENT | FI_MR_PROV_KEY, true);
	mr = mrt_reg(buf, 64, FI_REMOTE_WRITE, 0, 0, FI_RMA_EVENT);
	key = fi_mr_key(mr);
	cr_assert_neq(key, FI_KEY_NOTAVAIL);
	cr_assert_null(mrt_lookup(key));	/* disabled until enabled */
	cntr = mrt_cntr_open();
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0);
	cr_assert_null(mrt_lookup(key));
	cr_assert_eq(fi_mr_enable(mr), 0);
	cr_assert_eq(mrt_lookup(key), fi_mr_desc(mr));
	/* fi_mr(3): no binding after fi_mr_enable */
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_READ),
		     -FI_EOPBADSTATE);
}

Test(mr, rma_event_mode_needs_the_flag_to_bind)
{
	struct fid_mr *plain;

	mrt_open(FI_MR_RMA_EVENT, true);
	plain = mrt_reg(buf, 64, FI_REMOTE_WRITE, 0, 1, 0);
	/* without FI_RMA_EVENT an MR is usable at once */
	cr_assert_eq(mrt_lookup(1), fi_mr_desc(plain));
	cntr = mrt_cntr_open();
	cr_assert_eq(fi_mr_bind(plain, &cntr->fid, FI_REMOTE_WRITE),
		     -FI_EINVAL);
	cr_assert_eq(fi_close(&plain->fid), 0);
}

Test(mr, rma_event_flag_without_the_mode_is_enabled)
{
	mrt_open(0, true);
	mr = mrt_reg(buf, 64, FI_REMOTE_WRITE, 0, 7, FI_RMA_EVENT);
	cr_assert_eq(mrt_lookup(7), fi_mr_desc(mr));
	cntr = mrt_cntr_open();
	cr_assert_eq(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0);
}

/* ---- FI_REG_MR events --------------------------------------------------- */

Test(mr, registration_event_with_fi_reg_mr)
{
	struct fi_eq_attr attr = { .size = 8, .wait_obj = FI_WAIT_NONE };
	struct fi_eq_entry entry;
	uint32_t event = 0;
	int ctx, ret;

	ret = fi_eq_open(env.fabric, &attr, &eq, NULL);
	cr_assert_eq(ret, 0, "fi_eq_open: %s", fi_strerror(-ret));
	cr_assert_eq(fi_domain_bind(env.domain, &eq->fid, FI_REG_MR), 0);
	ret = fi_mr_reg(env.domain, buf, 64, FI_REMOTE_READ, 0, 9, 0, &mr,
			&ctx);
	cr_assert_eq(ret, 0);
	memset(&entry, 0, sizeof(entry));
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     sizeof(entry));
	cr_assert_eq(event, FI_MR_COMPLETE);
	cr_assert_eq(entry.fid, &mr->fid);
	cr_assert_eq(entry.context, &ctx);
}

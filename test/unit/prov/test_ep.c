/*
 * test_ep.c - the endpoint's control path: creation, naming, binding rules,
 * enabling, options, op flags, cancel and close, through the real
 * libfabric.
 */
#include "p4f_test.h"

#include <netinet/in.h>
#include <arpa/inet.h>

static struct test_env env;
static struct fid_ep *ep;
static struct fid_av *av;
static struct fid_cq *cq;

static void ep_setup(void)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };

	test_env_open(&env, NULL);
	cr_assert_eq(fi_endpoint(env.domain, env.info, &ep, NULL), 0);
	cr_assert_eq(fi_av_open(env.domain, &av_attr, &av, NULL), 0);
	cr_assert_eq(fi_cq_open(env.domain, &cq_attr, &cq, NULL), 0);
}

static void ep_teardown(void)
{
	if (ep)
		cr_expect_eq(fi_close(&ep->fid), 0);
	cr_expect_eq(fi_close(&cq->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	test_env_close(&env);
	ep = NULL;
}

TestSuite(ep, .init = ep_setup, .fini = ep_teardown, .timeout = 30);

static in_port_t ep_port(const void *addr)
{
	const struct sockaddr *sa = addr;

	return sa->sa_family == AF_INET ?
		((const struct sockaddr_in *)addr)->sin_port :
		((const struct sockaddr_in6 *)addr)->sin6_port;
}

Test(ep, getname_returns_a_bound_address)
{
	char addr[64];
	size_t len = sizeof(addr);

	cr_assert_eq(fi_getname(&ep->fid, addr, &len), 0);
	cr_expect(len == sizeof(struct sockaddr_in) ||
		  len == sizeof(struct sockaddr_in6));
	cr_expect_neq(ep_port(addr), 0, "the endpoint listens on a port");
	cr_expect_eq(((struct sockaddr *)addr)->sa_family,
		     env.info->addr_format == FI_SOCKADDR_IN ? AF_INET :
							       AF_INET6);
}

Test(ep, getname_too_small_reports_size)
{
	char addr[4];
	size_t len = sizeof(addr);

	cr_expect_eq(fi_getname(&ep->fid, addr, &len), -FI_ETOOSMALL);
	cr_expect_geq(len, sizeof(struct sockaddr_in));
}

Test(ep, two_endpoints_get_different_addresses)
{
	struct fid_ep *ep2;
	char a[64], b[64];
	size_t la = sizeof(a), lb = sizeof(b);

	cr_assert_eq(fi_endpoint(env.domain, env.info, &ep2, NULL), 0);
	cr_assert_eq(fi_getname(&ep->fid, a, &la), 0);
	cr_assert_eq(fi_getname(&ep2->fid, b, &lb), 0);
	cr_expect(la != lb || memcmp(a, b, la));
	cr_expect_eq(fi_close(&ep2->fid), 0);
}

Test(ep, source_port_from_fi_source_is_used)
{
	struct fi_info *hints = test_hints(), *info = NULL;
	struct fid_ep *ep2;
	char addr[64];
	size_t len = sizeof(addr);
	int ret;

	hints->addr_format = FI_SOCKADDR_IN;
	ret = fi_getinfo(TEST_FI_VERSION, "127.0.0.1", "45731", FI_SOURCE,
			 hints, &info);
	cr_assert_eq(ret, 0, "%s", fi_strerror(-ret));
	cr_assert_eq(fi_endpoint(env.domain, info, &ep2, NULL), 0);
	cr_assert_eq(fi_getname(&ep2->fid, addr, &len), 0);
	cr_expect_eq(ntohs(ep_port(addr)), 45731);
	cr_expect_eq(fi_close(&ep2->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

Test(ep, setname_before_enable)
{
	char addr[64];
	size_t len = sizeof(addr);
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;

	cr_assert_eq(fi_getname(&ep->fid, addr, &len), 0);
	if (sin->sin_family != AF_INET)
		cr_skip_test("IPv4 only");
	sin->sin_port = 0;	/* any port */
	cr_expect_eq(fi_setname(&ep->fid, addr, len), 0);
	len = sizeof(addr);
	cr_assert_eq(fi_getname(&ep->fid, addr, &len), 0);
	cr_expect_neq(sin->sin_port, 0);
	cr_expect_eq(fi_setname(&ep->fid, addr, 3), -FI_EINVAL);
}

Test(ep, enable_needs_an_av)
{
	cr_expect_eq(fi_enable(ep), -FI_ENOAV);
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_expect_eq(fi_enable(ep), 0);
}

Test(ep, bind_rules)
{
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), -FI_EINVAL,
		     "double bind of the transmit CQ");
	cr_expect_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_expect_eq(fi_ep_bind(ep, &av->fid, 0), -FI_EINVAL,
		     "double bind of an AV");
	cr_expect_eq(fi_enable(ep), 0);
	cr_expect_eq(fi_close(&cq->fid), -FI_EBUSY, "a bound CQ is busy");
	cr_expect_eq(fi_close(&av->fid), -FI_EBUSY, "a bound AV is busy");
}

Test(ep, bind_bad_flags)
{
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, 0), -FI_EBADFLAGS);
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, FI_REMOTE_WRITE), -FI_EBADFLAGS);
}

Test(ep, bind_after_enable_refused)
{
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_assert_eq(fi_enable(ep), 0);
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), -FI_EOPBADSTATE);
}

Test(ep, counters_bind_once_per_event)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr;

	cr_assert_eq(fi_cntr_open(env.domain, &attr, &cntr, NULL), 0);
	cr_expect_eq(fi_ep_bind(ep, &cntr->fid, FI_SEND | FI_RECV), 0);
	cr_expect_eq(fi_ep_bind(ep, &cntr->fid, FI_SEND), -FI_EINVAL);
	cr_expect_eq(fi_ep_bind(ep, &cntr->fid, FI_REMOTE_WRITE), 0);
	cr_expect_eq(fi_close(&cntr->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&ep->fid), 0);
	ep = NULL;
	cr_expect_eq(fi_close(&cntr->fid), 0, "the endpoint let it go");
}

Test(ep, min_multi_recv_option)
{
	size_t val = 0, len = sizeof(val), set = 12345;

	cr_expect_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
			       &val, &len), 0);
	cr_expect_gt(val, 0);
	cr_expect_eq(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
			       &set, sizeof(set)), 0);
	len = sizeof(val);
	cr_expect_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
			       &val, &len), 0);
	cr_expect_eq(val, 12345);
	cr_expect_eq(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
			       &set, 2), -FI_EINVAL);
	cr_expect_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
			       &val, &len), -FI_ENOPROTOOPT);
}

Test(ep, op_flags_get_and_set)
{
	uint64_t flags = FI_TRANSMIT;

	cr_assert_eq(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), 0);
	flags = FI_TRANSMIT | FI_INJECT_COMPLETE;
	cr_expect_eq(fi_control(&ep->fid, FI_SETOPSFLAG, &flags), 0);
	flags = FI_TRANSMIT;
	cr_assert_eq(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect(flags & FI_INJECT_COMPLETE);
	flags = FI_TRANSMIT | FI_RECV;
	cr_expect_eq(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), -FI_EINVAL);
}

Test(ep, data_operations_before_enable_and_unsupported)
{
	char buf[8] = { 0 };

	cr_expect_eq(fi_send(ep, buf, sizeof(buf), NULL, 0, NULL),
		     -FI_EOPBADSTATE, "not enabled yet");
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_assert_eq(fi_enable(ep), 0);
	cr_expect_eq(fi_tsend(ep, buf, sizeof(buf), NULL, 12345, 1, NULL),
		     -FI_EINVAL, "no such AV entry");
	cr_expect_eq(fi_read(ep, buf, sizeof(buf), NULL, 0, 0, 0, NULL),
		     -FI_EINVAL, "no such AV entry");
	cr_expect_eq(fi_cancel(&ep->fid, buf), -FI_ENOENT);
}

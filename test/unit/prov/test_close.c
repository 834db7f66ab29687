/*
 * test_close.c - fi_close of an endpoint that still owes its peers (the
 * linger, FI_PORTALS_LINGER_MS) and resource exhaustion at set-up, through
 * the real libfabric on TCP. The client/server cases (delivery across
 * close and exit, the first message, error codes) are fabtests-ext's
 * fx_close.
 */
#include "p4f_test.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_prov.h>

#define LINGER_MS	300

static struct test_env env;

static void setup(void)
{
	struct fi_info *hints = test_hints();

	setenv("FI_PORTALS_TRANSPORT", "tcp", 1);
	setenv("FI_PORTALS_LINGER_MS", "300", 1);
	hints->caps = FI_TAGGED;
	hints->addr_format = FI_SOCKADDR_IN;
	test_env_open(&env, hints);
}

static void teardown(void)
{
	test_env_close(&env);
}

TestSuite(close, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A peer whose kernel accepts the connection but that never answers (a
 * listening socket nobody accepts from): the message goes out behind the
 * HELLO and is never confirmed. fi_close lingers for FI_PORTALS_LINGER_MS
 * and no longer, and the send never completed successfully.
 */
Test(close, linger_is_bounded_when_the_peer_never_answers)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t dest;
	char buf[1000] = { 1 };
	uint64_t t0, took;
	int lfd, i;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(!bind(lfd, (struct sockaddr *)&sin, sizeof(sin)));
	cr_assert(!listen(lfd, 4));
	cr_assert(!getsockname(lfd, (struct sockaddr *)&sin, &len));

	cr_assert_eq(fi_cq_open(env.domain, &ca, &cq, NULL), 0);
	cr_assert_eq(fi_av_open(env.domain, &aa, &av, NULL), 0);
	cr_assert_eq(fi_endpoint(env.domain, env.info, &ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(ep), 0);
	cr_assert_eq(fi_av_insert(av, &sin, 1, &dest, 0, NULL), 1);

	cr_assert_eq(fi_tsend(ep, buf, sizeof(buf), NULL, dest, 1, NULL), 0);
	/* the copy went out behind the HELLO, but nobody confirmed it */
	for (i = 0; i < 100; i++)
		cr_assert_eq(fi_cq_read(cq, &e, 1), -FI_EAGAIN,
			     "a send nobody answered completed");
	t0 = now_ms();
	cr_assert_eq(fi_close(&ep->fid), 0);
	took = now_ms() - t0;
	cr_assert(took >= LINGER_MS - 10, "fi_close lingered %llu ms only",
		  (unsigned long long)took);
	cr_assert(took <= LINGER_MS + 700, "fi_close took %llu ms, linger %d",
		  (unsigned long long)took, LINGER_MS);
	cr_assert_eq(fi_cq_read(cq, &e, 1), -FI_EAGAIN,
		     "a completion after close");
	cr_assert_eq(fi_close(&cq->fid), 0);
	cr_assert_eq(fi_close(&av->fid), 0);
	close(lfd);
}

/* Nothing owed: fi_close does not wait at all. */
Test(close, nothing_owed_no_linger)
{
	struct fid_ep *ep;
	uint64_t t0;

	cr_assert_eq(fi_endpoint(env.domain, env.info, &ep, NULL), 0);
	t0 = now_ms();
	cr_assert_eq(fi_close(&ep->fid), 0);
	cr_assert(now_ms() - t0 < LINGER_MS / 2, "fi_close waited");
}

/* Use up the process's descriptors (the limit lowered first). */
static int exhaust_fds(int *fds, int max)
{
	struct rlimit rl = { .rlim_cur = 64, .rlim_max = 64 };
	int n = 0, fd;

	cr_assert(!setrlimit(RLIMIT_NOFILE, &rl));
	while (n < max && (fd = open("/dev/null", O_RDONLY)) >= 0)
		fds[n++] = fd;
	cr_assert_eq(errno, EMFILE);
	return n;
}

/*
 * Out of descriptors, the provider says so (-FI_EMFILE) instead of "no
 * such interface". libfabric 1.17's fi_getinfo turns every provider error
 * into -FI_ENODATA (it logs the provider's), so the provider's own entry
 * point is asked here, as libfabric asks it.
 */
Test(close, getinfo_out_of_descriptors_is_emfile)
{
	const char *dir = getenv("FI_PROVIDER_PATH");
	struct fi_provider *(*ini)(void);
	struct fi_provider *prov;
	struct fi_info *info = NULL, *hints = test_hints();
	char path[PATH_MAX];
	int fds[128], n, i, ret;
	void *dl;

	cr_assert_not_null(dir, "FI_PROVIDER_PATH");
	snprintf(path, sizeof(path), "%s/libportals-fi.so", dir);
	dl = dlopen(path, RTLD_NOW);
	cr_assert_not_null(dl, "%s", dlerror());
	ini = (struct fi_provider *(*)(void))dlsym(dl, "fi_prov_ini");
	cr_assert_not_null(ini);
	prov = ini();
	cr_assert_not_null(prov);
	hints->caps = FI_TAGGED;
	n = exhaust_fds(fds, 128);
	ret = prov->getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &info);
	for (i = 0; i < n; i++)
		close(fds[i]);
	cr_assert_eq(ret, -FI_EMFILE, "getinfo: %d (%s)", ret,
		     fi_strerror(-ret));
	cr_assert_null(info);
	fi_freeinfo(hints);
}

/* Out of descriptors, an endpoint cannot listen: -FI_EMFILE. */
Test(close, endpoint_out_of_descriptors_is_emfile)
{
	struct fid_ep *ep = NULL;
	int fds[128], n, i, ret;

	n = exhaust_fds(fds, 128);
	ret = fi_endpoint(env.domain, env.info, &ep, NULL);
	for (i = 0; i < n; i++)
		close(fds[i]);
	cr_assert_eq(ret, -FI_EMFILE, "fi_endpoint: %d (%s)", ret,
		     fi_strerror(-ret));
}

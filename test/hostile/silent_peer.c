/*
 * silent_peer.c - many connections that reach a provider endpoint
 * (test/hostile/victim.c) and then say nothing: the handshake's
 * slow-loris. Each must be closed by the endpoint (EOF or reset, seen
 * here) within the handshake timeout plus one second of its own connect,
 * however many there are; meanwhile a normal client, released by
 * $HOSTILE_GO_FILE once all of them are connected, must be served
 * (test/hostile/silent.sh checks that side).
 *
 *   silent_peer <victim-ip> <victim-port> <connections> <handshake-ms>
 *
 * Raises its own RLIMIT_NOFILE soft limit to hold the connections.
 * Prints "silent_connected N" once all are connected, then "silent_closed
 * N of M: E before the handshake timeout, latest L ms after its connect
 * (bound B ms)"; exit 0 when every connection was closed within the
 * bound, 1 otherwise, 2 on a set-up error. Nothing here talks libfabric
 * or the wire protocol: a silent peer sends no byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SP_SLACK_MS	1000	/* a close may come this late, at most */
#define SP_GRACE_MS	5000	/* then stop waiting: those left failed */

static uint64_t sp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Room for n descriptors and a few more: the soft limit up to the hard. */
static int sp_nofile(int n)
{
	rlim_t want = (rlim_t)n + 32;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		fprintf(stderr, "silent_peer: RLIMIT_NOFILE hard limit %llu, "
			"need %llu\n", (unsigned long long)rl.rlim_max,
			(unsigned long long)want);
		return -1;
	}
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* The victim closed fd (EOF or an error such as a reset)? */
static bool sp_closed(int fd)
{
	char buf[64];
	ssize_t n;

	do {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	} while (n > 0);	/* a silent peer expects nothing, but read it */
	return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
			  errno != EINTR);
}

static void sp_touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const char *go = getenv("HOSTILE_GO_FILE");
	struct pollfd *pfd;
	uint64_t *at, hs_ms, bound, latest = 0, now, stop;
	int n, i, left, early = 0, late = 0;
	int *idx;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: silent_peer <victim-ip> <victim-port> "
			"<connections> <handshake-ms>\n");
		return 2;
	}
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	n = atoi(argv[3]);
	hs_ms = strtoull(argv[4], NULL, 10);
	bound = hs_ms + SP_SLACK_MS;
	pfd = calloc((size_t)n, sizeof(*pfd));
	at = calloc((size_t)n, sizeof(*at));
	idx = calloc((size_t)n, sizeof(*idx));
	if (n <= 0 || !pfd || !at || !idx || sp_nofile(n)) {
		fprintf(stderr, "silent_peer: cannot set up %d connections\n",
			n);
		return 2;
	}
	for (i = 0; i < n; i++) {
		pfd[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (pfd[i].fd < 0 ||
		    connect(pfd[i].fd, (struct sockaddr *)&sin, sizeof(sin))) {
			fprintf(stderr, "silent_peer: connection %d: %s\n", i,
				strerror(errno));
			return 2;
		}
		at[i] = sp_now_ms();	/* the victim's clock starts later */
		pfd[i].events = POLLIN;
		idx[i] = i;
	}
	printf("silent_connected %d\n", n);
	fflush(stdout);
	if (go)
		sp_touch(go);	/* a normal client comes in behind them */

	/* pfd[0, left) are the open ones; idx[] says which connection */
	left = n;
	stop = at[n - 1] + bound + SP_GRACE_MS;
	while (left && sp_now_ms() < stop) {
		if (poll(pfd, (nfds_t)left, 10) < 0 && errno != EINTR)
			break;
		now = sp_now_ms();
		for (i = 0; i < left; i++) {
			if (!pfd[i].revents || !sp_closed(pfd[i].fd))
				continue;
			at[idx[i]] = now - at[idx[i]];	/* from now: age */
			if (at[idx[i]] > latest)
				latest = at[idx[i]];
			if (at[idx[i]] + 10 < hs_ms)
				early++;	/* evicted by newer ones */
			if (at[idx[i]] > bound)
				late++;
			close(pfd[i].fd);
			left--;
			pfd[i] = pfd[left];
			idx[i] = idx[left];
			i--;
		}
	}
	printf("silent_closed %d of %d: %d before the handshake timeout, "
	       "latest %llu ms after its connect (bound %llu ms)\n", n - left,
	       n, early, (unsigned long long)latest,
	       (unsigned long long)bound);
	if (left || late)
		printf("silent_peer: FAIL: %d never closed, %d closed later "
		       "than %llu ms after their connect\n", left, late,
		       (unsigned long long)bound);
	for (i = 0; i < left; i++)
		close(pfd[i].fd);
	free(pfd);
	free(at);
	free(idx);
	return left || late ? 1 : 0;
}

/*
 * test_eq.c - event queues: fi_eq_write/read/FI_PEEK, the `size` limit,
 * every event kind, error entries at the head (-FI_EAVAIL) and behind
 * events, fi_eq_readerr err_data rules per API version, sread (timeout,
 * wake-up by a writer thread), FI_GETWAIT + fi_trywait, wait sets, and
 * close while bound.
 *
 * Most tests open the fabric through the provider code linked into this
 * binary so they can queue error entries the way the AV and domain will
 * (p4f_eq_write_error); one goes through the real libfabric.
 */
#include <config.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "p4f_static_test.h"

TestSuite(eq, .init = static_setup_fabric, .fini = static_teardown,
	  .timeout = 60);

/* ---- helpers ----------------------------------------------------------- */

static struct fid_eq *open_eq(size_t size, uint64_t flags,
			      enum fi_wait_obj wait_obj)
{
	struct fi_eq_attr attr = {
		.size = size, .flags = flags, .wait_obj = wait_obj,
	};
	struct fid_eq *eq;
	int ret;

	ret = fi_eq_open(env.fabric, &attr, &eq, NULL);
	cr_assert_eq(ret, 0, "fi_eq_open: %s", fi_strerror(-ret));
	return eq;
}

static void write_notify(struct fid_eq *eq, uintptr_t i)
{
	struct fi_eq_entry entry = {
		.fid = &eq->fid, .context = (void *)(0x100 + i), .data = i,
	};

	cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
		     sizeof(entry));
}

static void expect_notify(struct fid_eq *eq, uintptr_t i, uint64_t flags)
{
	struct fi_eq_entry entry;
	uint32_t event = 0;

	memset(&entry, 0, sizeof(entry));
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), flags),
		     sizeof(entry));
	cr_expect_eq(event, FI_NOTIFY);
	cr_expect_eq(entry.context, (void *)(0x100 + i));
	cr_expect_eq(entry.data, i);
}

static void write_error(struct fid_eq *eq, int err, const void *data,
			size_t len)
{
	struct fi_eq_err_entry entry = {
		.fid = &eq->fid, .context = (void *)0xe0, .data = 7,
		.err = err, .prov_errno = FI_EIO,
		.err_data = (void *)data, .err_data_size = len,
	};

	cr_assert_eq(p4f_eq_write_err_entry(p4f_eq_of(eq), &entry),
		     sizeof(entry));
}

/* ---- write, read, peek ------------------------------------------------- */

Test(eq, write_read_peek_in_order)
{
	struct fid_eq *eq = open_eq(16, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry entry;
	uint32_t event;
	uintptr_t i;

	for (i = 0; i < 5; i++)
		write_notify(eq, i);
	for (i = 0; i < 5; i++) {
		expect_notify(eq, i, FI_PEEK);
		expect_notify(eq, i, FI_PEEK);	/* peek did not consume */
		expect_notify(eq, i, 0);
	}
	cr_expect_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     -FI_EAGAIN);
	cr_expect_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), FI_SEND),
		     -FI_EBADFLAGS);
	test_close_ok(&eq->fid);
}

Test(eq, holds_exactly_size_events)
{
	struct fid_eq *eq = open_eq(4, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry entry = { 0 };
	uintptr_t i;

	for (i = 0; i < 4; i++)
		write_notify(eq, i);
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
		     -FI_EAGAIN, "an EQ of 4 took a fifth event");
	cr_expect_eq(p4f_eq_write_error(p4f_eq_of(eq), NULL, NULL, 0,
					FI_EIO, 0), -FI_EAGAIN);
	expect_notify(eq, 0, 0);
	write_notify(eq, 4);	/* room again */
	for (i = 1; i < 5; i++)
		expect_notify(eq, i, 0);
	test_close_ok(&eq->fid);
}

Test(eq, write_needs_fi_write_and_a_real_event)
{
	struct fid_eq *eq = open_eq(4, 0, FI_WAIT_NONE);
	struct fid_eq *weq = open_eq(4, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry entry = { 0 };

	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
		     -FI_EINVAL);
	cr_expect_eq(fi_eq_write(weq, 12345, &entry, sizeof(entry), 0),
		     -FI_EINVAL);
	cr_expect_eq(fi_eq_write(weq, FI_NOTIFY, &entry, 4, 0), -FI_EINVAL);
	cr_expect_eq(fi_eq_write(weq, FI_NOTIFY, &entry, sizeof(entry), 1),
		     -FI_EBADFLAGS);
	/* the provider's own path works without FI_WRITE */
	cr_expect_eq(p4f_eq_write_event(p4f_eq_of(eq), FI_AV_COMPLETE, &entry,
					sizeof(entry), 0), sizeof(entry));
	test_close_ok(&eq->fid);
	test_close_ok(&weq->fid);
}

/* Every event kind fi_eq(3) lists goes through, data copied at write. */
Test(eq, every_event_kind_round_trips)
{
	static const uint32_t plain[] = {
		FI_NOTIFY, FI_MR_COMPLETE, FI_AV_COMPLETE, FI_JOIN_COMPLETE,
	};
	static const uint32_t cm[] = { FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN };
	struct fid_eq *eq = open_eq(16, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry entry, out;
	struct {
		struct fi_eq_cm_entry hdr;
		char data[100];
	} cmw, cmr;
	uint32_t event;
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(plain); i++) {
		entry = (struct fi_eq_entry){ &eq->fid, (void *)i, i * 3 };
		cr_assert_eq(fi_eq_write(eq, plain[i], &entry, sizeof(entry), 0),
			     sizeof(entry));
		memset(&entry, 0, sizeof(entry));	/* the EQ kept a copy */
		cr_assert_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			     sizeof(out));
		cr_expect_eq(event, plain[i]);
		cr_expect_eq(out.context, (void *)i);
		cr_expect_eq(out.data, i * 3);
	}
	for (i = 0; i < P4U_ARRAY_SIZE(cm); i++) {
		memset(&cmw, 0, sizeof(cmw));
		cmw.hdr.fid = &eq->fid;
		memset(cmw.data, 'a' + (int)i, sizeof(cmw.data));
		cr_assert_eq(fi_eq_write(eq, cm[i], &cmw, sizeof(cmw), 0),
			     sizeof(cmw));
		memset(&cmr, 0, sizeof(cmr));
		cr_assert_eq(fi_eq_read(eq, &event, &cmr, sizeof(cmr), 0),
			     sizeof(cmr));
		cr_expect_eq(event, cm[i]);
		cr_expect_eq(cmr.hdr.fid, &eq->fid);
		cr_expect_arr_eq(cmr.data, cmw.data, sizeof(cmw.data));
	}
	test_close_ok(&eq->fid);
}

/* CM data is cut to the buffer; a plain event must fit whole. */
Test(eq, short_buffers)
{
	struct fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_NONE);
	struct {
		struct fi_eq_cm_entry hdr;
		char data[40];
	} cmw = { .data = "connection data" }, cmr;
	struct fi_eq_entry entry = { 0 };
	uint32_t event;

	write_notify(eq, 0);
	cr_expect_eq(fi_eq_read(eq, &event, &entry, sizeof(entry) - 1, 0),
		     -FI_ETOOSMALL);
	expect_notify(eq, 0, 0);	/* still there */
	cr_assert_eq(fi_eq_write(eq, FI_CONNECTED, &cmw, sizeof(cmw), 0),
		     sizeof(cmw));
	memset(&cmr, 0, sizeof(cmr));
	cr_expect_eq(fi_eq_read(eq, &event, &cmr, sizeof(cmr.hdr) + 4, 0),
		     sizeof(cmr.hdr) + 4);
	cr_expect_arr_eq(cmr.data, "conn", 4);
	cr_expect_eq(cmr.data[4], '\0');
	test_close_ok(&eq->fid);
}

/* ---- errors ------------------------------------------------------------ */

Test(eq, error_at_head_blocks_read_until_readerr)
{
	struct fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_err_entry err;
	struct fi_eq_entry entry;
	uint32_t event;

	write_notify(eq, 0);
	cr_assert_eq(p4f_eq_write_error(p4f_eq_of(eq), &eq->fid, (void *)0xe1,
					9, FI_ENOENT, 0), sizeof(err));
	write_notify(eq, 1);

	memset(&err, 0, sizeof(err));
	cr_expect_eq(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN, "event is next");
	expect_notify(eq, 0, 0);
	cr_expect_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     -FI_EAVAIL);
	cr_expect_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), FI_PEEK),
		     -FI_EAVAIL);
	cr_assert_eq(fi_eq_readerr(eq, &err, FI_PEEK), sizeof(err));
	cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
	cr_expect_eq(err.fid, &eq->fid);
	cr_expect_eq(err.context, (void *)0xe1);
	cr_expect_eq(err.data, 9);
	cr_expect_eq(err.err, FI_ENOENT);
	cr_expect_eq(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
	expect_notify(eq, 1, 0);
	cr_expect_str_eq(fi_eq_strerror(eq, FI_EIO, NULL, NULL, 0),
			 fi_strerror(FI_EIO));
	test_close_ok(&eq->fid);
}

Test(eq, readerr_err_data_by_api_version)
{
	struct fid_eq *eq = open_eq(8, 0, FI_WAIT_NONE);
	const char data[] = "eq error data";
	struct fi_eq_err_entry err;
	char small[5], mine[32];

	write_error(eq, FI_EIO, data, sizeof(data));
	write_error(eq, FI_EIO, data, sizeof(data));
	write_error(eq, FI_EIO, data, sizeof(data));

	/* 1.5+: the caller's buffer gets a copy, cut to its size */
	memset(&err, 0, sizeof(err));
	err.err_data = small;
	err.err_data_size = sizeof(small);
	cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
	cr_expect_eq(err.err_data, small);
	cr_expect_eq(err.err_data_size, sizeof(small));
	cr_expect_arr_eq(small, data, sizeof(small));
	cr_expect_eq(err.prov_errno, FI_EIO);

	/* 1.5+, size 0: a provider buffer with all of it */
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
	cr_assert_not_null(err.err_data);
	cr_expect_eq(err.err_data_size, sizeof(data));
	cr_expect_arr_eq(err.err_data, data, sizeof(data));

	test_close_ok(&eq->fid);	/* with an error entry still queued */

	/* an application built for 1.4: no err_data_size field at all */

	env.fabric->api_version = FI_VERSION(1, 4);
	eq = open_eq(8, 0, FI_WAIT_NONE);
	write_error(eq, FI_EIO, data, sizeof(data));
	memset(&err, 0, sizeof(err));
	err.err_data = mine;
	err.err_data_size = 0xfeed;
	cr_assert_eq(fi_eq_readerr(eq, &err, 0),
		     offsetof(struct fi_eq_err_entry, err_data_size));
	cr_expect_neq(err.err_data, mine);
	cr_expect_arr_eq(err.err_data, data, sizeof(data));
	cr_expect_eq(err.err_data_size, 0xfeed, "written past a 1.4 entry");
	test_close_ok(&eq->fid);
}

/* ---- sread, FI_GETWAIT, trywait, wait sets ----------------------------- */

Test(eq, sread_timeout_and_immediate)
{
	struct fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_FD);
	struct fid_eq *none = open_eq(8, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry entry;
	uint32_t event;
	uint64_t t0 = test_now_ms();

	cr_expect_eq(fi_eq_sread(eq, &event, &entry, sizeof(entry), 150, 0),
		     -FI_EAGAIN);
	cr_expect_geq(test_now_ms() - t0, 140, "returned before the timeout");
	write_notify(eq, 4);
	t0 = test_now_ms();
	cr_expect_eq(fi_eq_sread(eq, &event, &entry, sizeof(entry), 20000,
				 FI_PEEK), sizeof(entry));
	cr_expect_eq(fi_eq_sread(eq, &event, &entry, sizeof(entry), 20000, 0),
		     sizeof(entry), "peek consumed the event");
	cr_expect_lt(test_now_ms() - t0, 10000);
	cr_expect_eq(entry.context, (void *)0x104);
	cr_expect_eq(fi_eq_sread(none, &event, &entry, sizeof(entry), 10, 0),
		     -FI_EINVAL);
	test_close_ok(&eq->fid);
	test_close_ok(&none->fid);
}

struct eq_sread_arg {
	struct fid_eq *eq;
	ssize_t ret;
	struct fi_eq_entry entry;
	uint64_t elapsed;
	_Atomic pid_t tid;		/* set as the call begins */
};

static void *eq_sread_thread(void *p)
{
	struct eq_sread_arg *arg = p;
	uint64_t t0 = test_now_ms();
	uint32_t event;

	arg->tid = (pid_t)syscall(SYS_gettid);
	arg->ret = fi_eq_sread(arg->eq, &event, &arg->entry,
			       sizeof(arg->entry), 20000, 0);
	arg->elapsed = test_now_ms() - t0;
	return NULL;
}

Test(eq, sread_woken_by_writer_thread)
{
	struct eq_sread_arg arg = { 0 };
	pthread_t thread;

	arg.eq = open_eq(8, FI_WRITE, FI_WAIT_UNSPEC);
	cr_assert_eq(pthread_create(&thread, NULL, eq_sread_thread, &arg), 0);
	test_wait_until_polling(&arg.tid);
	write_notify(arg.eq, 8);
	pthread_join(thread, NULL);
	cr_assert_eq(arg.ret, sizeof(arg.entry));
	cr_expect_eq(arg.entry.context, (void *)0x108);
	cr_expect_lt(arg.elapsed, 10000);
	test_close_ok(&arg.eq->fid);
}

Test(eq, getwait_fd_and_trywait)
{
	struct fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_FD);
	struct fid *fids[] = { &eq->fid };
	enum fi_wait_obj obj;
	int fd = -1;

	cr_assert_eq(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
	cr_assert_eq(fi_control(&eq->fid, FI_GETWAITOBJ, &obj), 0);
	cr_expect_eq(obj, FI_WAIT_FD);
	cr_assert_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0);
	write_notify(eq, 0);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "event written, fd not readable");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	expect_notify(eq, 0, 0);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0, "trywait left the fd readable");
	write_notify(eq, 1);	/* the second cycle needs trywait to re-arm */
	cr_expect_eq(test_poll_fd(fd, 0), 1, "second event did not signal");
	test_close_ok(&eq->fid);
}

Test(eq, waitset_member)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_attr attr = {
		.size = 8, .flags = FI_WRITE, .wait_obj = FI_WAIT_SET,
	};
	struct fid_wait *set;
	struct fid_eq *eq;
	struct fid *fids[1];

	cr_assert_eq(fi_wait_open(env.fabric, &wattr, &set), 0);
	attr.wait_set = set;
	cr_assert_eq(fi_eq_open(env.fabric, &attr, &eq, NULL), 0);
	fids[0] = &set->fid;
	cr_expect_eq(fi_wait(set, 0), -FI_ETIMEDOUT);
	write_notify(eq, 1);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	cr_expect_eq(fi_wait(set, 20000), 0);
	expect_notify(eq, 1, 0);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(fi_close(&set->fid), -FI_EBUSY);
	test_close_ok(&eq->fid);
	test_close_ok(&set->fid);
}

Test(eq, waitset_of_another_fabric_refused)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_FD };
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_SET };
	struct fid_fabric *other;
	struct fid_wait *set;
	struct fid_eq *eq;

	cr_assert_eq(p4f_fabric_open(env.info->fabric_attr, &other, NULL), 0);
	cr_assert_eq(fi_wait_open(other, &wattr, &set), 0);
	attr.wait_set = set;
	cr_expect_eq(fi_eq_open(env.fabric, &attr, &eq, NULL), -FI_EINVAL);
	attr.wait_set = NULL;
	cr_expect_eq(fi_eq_open(env.fabric, &attr, &eq, NULL), -FI_EINVAL);
	wattr.wait_obj = FI_WAIT_MUTEX_COND;
	cr_expect_eq(fi_wait_open(other, &wattr, &set), -FI_ENOSYS);
	test_close_ok(&set->fid);
	test_close_ok(&other->fid);
}

/* ---- lifetime ---------------------------------------------------------- */

Test(eq, close_while_bound_is_ebusy)
{
	struct fid_eq *eq = open_eq(8, 0, FI_WAIT_NONE);
	struct fid_domain *domain;

	cr_assert_eq(fi_domain(env.fabric, env.info, &domain, NULL), 0);
	cr_assert_eq(fi_domain_bind(domain, &eq->fid, 0), 0);
	cr_expect_eq(fi_close(&eq->fid), -FI_EBUSY);
	test_close_ok(&domain->fid);
	test_close_ok(&eq->fid);
}

Test(eq, open_attributes)
{
	struct fi_eq_attr attr = { .size = 0 };
	struct fid_eq *eq;
	uintptr_t i;

	cr_assert_eq(fi_eq_open(env.fabric, &attr, &eq, NULL), 0);
	test_close_ok(&eq->fid);
	attr.flags = FI_SEND;
	cr_expect_eq(fi_eq_open(env.fabric, &attr, &eq, NULL), -FI_EBADFLAGS);
	attr.flags = 0;
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	cr_expect_eq(fi_eq_open(env.fabric, &attr, &eq, NULL), -FI_ENOSYS);
	/* default size holds a good many events */
	eq = open_eq(0, FI_WRITE, FI_WAIT_NONE);
	for (i = 0; i < 512; i++)
		write_notify(eq, i);
	test_close_ok(&eq->fid);	/* queued events are freed, not leaked */
}

Test(eq, plugin_eq_through_libfabric)
{
	struct test_env real;
	struct fi_eq_attr attr = { .size = 4, .flags = FI_WRITE,
				   .wait_obj = FI_WAIT_UNSPEC };
	struct fid_eq *eq;
	uintptr_t i;

	test_env_open(&real, NULL);
	cr_assert_eq(fi_eq_open(real.fabric, &attr, &eq, NULL), 0);
	for (i = 0; i < 4; i++)
		write_notify(eq, i);
	test_close_ok(&real.domain->fid);
	real.domain = NULL;
	cr_expect_eq(fi_close(&real.fabric->fid), -FI_EBUSY, "EQ holds it");
	for (i = 0; i < 4; i++)
		expect_notify(eq, i, 0);
	test_close_ok(&eq->fid);
	test_env_close(&real);
}

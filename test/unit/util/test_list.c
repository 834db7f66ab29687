/*
 * test_list.c - p4u_list (intrusive circular lists) and p4u_lock (the mutex
 * that can be switched off).
 *
 * Lists are checked through a helper that walks both directions, so a
 * broken prev link fails as surely as a broken next link.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "p4u_list.h"
#include "p4u_lock.h"

struct item {
	int val;
	struct p4u_list link;
};

#define NITEMS 8

static struct p4u_list head;
static struct item items[NITEMS];

static void list_setup(void)
{
	int i;

	p4u_list_init(&head);
	for (i = 0; i < NITEMS; i++) {
		items[i].val = i;
		p4u_list_node_init(&items[i].link);
	}
}

static void list_teardown(void)
{
}

TestSuite(list, .init = list_setup, .fini = list_teardown, .timeout = 60);

/* The list holds exactly want[0..n) in order, forwards and backwards. */
static void assert_list(const struct p4u_list *h, const int *want, size_t n)
{
	const struct p4u_list *node;
	size_t i = 0;

	for (node = h->next; node != h; node = node->next) {
		cr_assert_lt(i, n, "list longer than %zu", n);
		cr_assert_eq(node->next->prev, node, "broken prev link at %zu", i);
		cr_assert_eq(container_of(node, struct item, link)->val, want[i],
			     "position %zu: got %d, want %d", i,
			     container_of(node, struct item, link)->val, want[i]);
		i++;
	}
	cr_assert_eq(i, n, "list has %zu nodes, want %zu", i, n);
	for (node = h->prev; node != h; node = node->prev) {
		cr_assert_gt(i, 0);
		i--;
		cr_assert_eq(container_of(node, struct item, link)->val, want[i],
			     "backwards position %zu", i);
	}
	cr_assert_eq(i, 0);
	cr_assert_eq(p4u_list_length(h), n);
	cr_assert_eq(p4u_list_empty(h), n == 0);
}

Test(list, init_is_empty_and_self_linked)
{
	struct p4u_list st = P4U_LIST_INITIALIZER(st);

	cr_assert(p4u_list_empty(&head));
	cr_assert_eq(head.next, &head);
	cr_assert_eq(head.prev, &head);
	cr_assert_eq(p4u_list_length(&head), 0);
	cr_assert(p4u_list_empty(&st));
	cr_assert_not(p4u_list_node_linked(&items[0].link));
	cr_assert_null(p4u_list_pop_head(&head));
	cr_assert_null(p4u_list_first_entry(&head, struct item, link));
}

Test(list, insert_tail_keeps_order)
{
	static const int want[] = { 0, 1, 2, 3 };
	int i;

	for (i = 0; i < 4; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	assert_list(&head, want, 4);
	for (i = 0; i < 4; i++)
		cr_assert(p4u_list_node_linked(&items[i].link));
}

Test(list, insert_head_reverses)
{
	static const int want[] = { 3, 2, 1, 0 };
	int i;

	for (i = 0; i < 4; i++)
		p4u_list_insert_head(&head, &items[i].link);
	assert_list(&head, want, 4);
	cr_assert_eq(p4u_list_first_entry(&head, struct item, link), &items[3]);
}

Test(list, insert_before_middle_first_and_head)
{
	static const int want[] = { 4, 0, 3, 1, 5 };

	p4u_list_insert_tail(&head, &items[0].link);
	p4u_list_insert_tail(&head, &items[1].link);
	p4u_list_insert_before(&items[1].link, &items[3].link);	/* middle */
	p4u_list_insert_before(&items[0].link, &items[4].link);	/* new first */
	p4u_list_insert_before(&head, &items[5].link);		/* = tail add */
	assert_list(&head, want, 5);
}

Test(list, rotate_to_makes_a_node_first_keeping_the_cycle)
{
	static const int want[] = { 2, 3, 0, 1 }, again[] = { 0, 1, 2, 3 };
	int i;

	for (i = 0; i < 4; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	p4u_list_rotate_to(&head, &items[2].link);
	assert_list(&head, want, 4);
	p4u_list_rotate_to(&head, &items[2].link);	/* already first */
	assert_list(&head, want, 4);
	p4u_list_rotate_to(&head, &items[0].link);
	assert_list(&head, again, 4);
}

Test(list, remove_self_links_node)
{
	static const int want[] = { 0, 2 };
	static const int want_one[] = { 2 };
	int i;

	for (i = 0; i < 3; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	p4u_list_remove(&items[1].link);
	cr_assert_eq(items[1].link.next, &items[1].link);
	cr_assert_eq(items[1].link.prev, &items[1].link);
	cr_assert_not(p4u_list_node_linked(&items[1].link));
	assert_list(&head, want, 2);

	/* removing an unlinked node again leaves the list alone */
	p4u_list_remove(&items[1].link);
	assert_list(&head, want, 2);

	p4u_list_remove(&items[0].link);
	assert_list(&head, want_one, 1);
	p4u_list_remove(&items[2].link);
	assert_list(&head, NULL, 0);
	cr_assert_eq(head.next, &head);
	cr_assert_eq(head.prev, &head);
}

Test(list, pop_head_fifo)
{
	struct p4u_list *node;
	int i;

	for (i = 0; i < NITEMS; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	for (i = 0; i < NITEMS; i++) {
		node = p4u_list_pop_head(&head);
		cr_assert_eq(node, &items[i].link);
		cr_assert_not(p4u_list_node_linked(node));
		cr_assert_eq(p4u_list_length(&head), (size_t)(NITEMS - 1 - i));
	}
	cr_assert_null(p4u_list_pop_head(&head));
}

/* splice: (dst size, src size) matrix */
struct splice_case {
	int ndst;
	int nsrc;
};

ParameterizedTestParameters(list, splice_tail_keeps_order)
{
	static struct splice_case cases[] = {
		{ 0, 0 }, { 0, 1 }, { 0, 3 }, { 1, 0 }, { 3, 0 },
		{ 1, 1 }, { 2, 3 }, { 3, 5 },
	};

	return cr_make_param_array(struct splice_case, cases,
				   P4U_ARRAY_SIZE(cases));
}

ParameterizedTest(struct splice_case *c, list, splice_tail_keeps_order)
{
	struct p4u_list src;
	int want[NITEMS];
	int i;

	p4u_list_init(&src);
	for (i = 0; i < c->ndst; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	for (i = c->ndst; i < c->ndst + c->nsrc; i++)
		p4u_list_insert_tail(&src, &items[i].link);
	for (i = 0; i < c->ndst + c->nsrc; i++)
		want[i] = i;

	p4u_list_splice_tail(&head, &src);
	assert_list(&head, want, c->ndst + c->nsrc);
	assert_list(&src, NULL, 0);
}

Test(list, foreach_safe_removes_every_other)
{
	static const int want[] = { 1, 3, 5, 7 };
	static const int want_removed[] = { 0, 2, 4, 6 };
	struct p4u_list removed, *node, *tmp;
	struct item *pos, *ptmp;
	int i, seen = 0;

	p4u_list_init(&removed);
	for (i = 0; i < NITEMS; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	p4u_list_foreach_safe(&head, node, tmp) {
		struct item *it = container_of(node, struct item, link);

		cr_assert_eq(it->val, seen, "visited %d, want %d", it->val, seen);
		seen++;
		if (!(it->val & 1)) {
			p4u_list_remove(node);
			p4u_list_insert_tail(&removed, node);
		}
	}
	cr_assert_eq(seen, NITEMS);
	assert_list(&head, want, 4);
	assert_list(&removed, want_removed, 4);

	/* the entry flavour, removing everything */
	seen = 0;
	p4u_list_foreach_entry_safe(&head, pos, ptmp, struct item, link) {
		cr_assert_eq(pos->val, want[seen]);
		seen++;
		p4u_list_remove(&pos->link);
	}
	cr_assert_eq(seen, 4);
	assert_list(&head, NULL, 0);
}

Test(list, foreach_entry_visits_in_order)
{
	struct item *pos;
	struct p4u_list *node;
	int i, seen = 0;

	for (i = 0; i < NITEMS; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	p4u_list_foreach_entry(&head, pos, struct item, link)
		cr_assert_eq(pos->val, seen++);
	cr_assert_eq(seen, NITEMS);
	seen = 0;
	p4u_list_foreach(&head, node)
		seen++;
	cr_assert_eq(seen, NITEMS);

	/* nothing visited on an empty list */
	p4u_list_init(&head);
	p4u_list_foreach_entry(&head, pos, struct item, link)
		cr_assert_fail("visited a node of an empty list");
}

/*
 * Fixed bug: the entry walks formed container_of() of the head (at the
 * end of every walk, and at once on an empty list): a pointer outside any
 * object, which GCC rejects with -Warray-bounds in the sanitizer build.
 * Now pos and tmp only ever hold real entries (tmp NULL after the last)
 * and the head expression is evaluated once.
 */
Test(list, walks_only_form_entry_pointers)
{
	struct item sentinel, *pos = &sentinel, *tmp = &sentinel;
	struct item *want_tmp;
	int heads = 0, i;

	p4u_list_foreach_entry((heads++, &head), pos, struct item, link)
		cr_assert_fail("visited a node of an empty list");
	cr_assert_eq(pos, &sentinel, "empty walk set pos to a non-entry");
	p4u_list_foreach_entry_safe(&head, pos, tmp, struct item, link)
		cr_assert_fail("visited a node of an empty list");
	cr_assert_eq(pos, &sentinel);
	cr_assert_eq(tmp, &sentinel);

	for (i = 0; i < 3; i++)
		p4u_list_insert_tail(&head, &items[i].link);
	i = 0;
	p4u_list_foreach_entry_safe((heads++, &head), pos, tmp, struct item,
				    link) {
		cr_assert_eq(pos, &items[i]);
		want_tmp = i < 2 ? &items[i + 1] : NULL;
		cr_assert_eq(tmp, want_tmp, "tmp at %d", i);
		i++;
	}
	cr_assert_eq(i, 3);
	cr_assert_eq(pos, &items[2], "pos left on the last entry");
	cr_assert_eq(heads, 2, "head expression evaluated %d times", heads);
}

Test(list, length_counts)
{
	int i;

	for (i = 0; i < NITEMS; i++) {
		cr_assert_eq(p4u_list_length(&head), (size_t)i);
		p4u_list_insert_head(&head, &items[i].link);
	}
	cr_assert_eq(p4u_list_length(&head), NITEMS);
}

/* ---- p4u_lock ---------------------------------------------------------- */

static struct p4u_lock test_lock;

static void lock_setup(void)
{
}

static void lock_teardown(void)
{
}

TestSuite(lock, .init = lock_setup, .fini = lock_teardown, .timeout = 60);

struct trylock_arg {
	struct p4u_lock *lock;
	int ret;		/* pthread_mutex_trylock's result */
	bool held;		/* p4u_lock_held() seen from that thread */
};

static void *lock_try_other_thread(void *arg)
{
	struct trylock_arg *ta = arg;

	ta->held = p4u_lock_held(ta->lock);
	ta->ret = pthread_mutex_trylock(&ta->lock->mutex);
	if (!ta->ret)
		pthread_mutex_unlock(&ta->lock->mutex);
	return NULL;
}

static struct trylock_arg lock_probe(struct p4u_lock *lock)
{
	struct trylock_arg ta = { .lock = lock, .ret = -1 };
	pthread_t thr;

	cr_assert_eq(pthread_create(&thr, NULL, lock_try_other_thread, &ta), 0);
	cr_assert_eq(pthread_join(thr, NULL), 0);
	return ta;
}

Test(lock, inactive_takes_no_mutex)
{
	struct trylock_arg ta;

	p4u_lock_init(&test_lock, false);
	p4u_lock_acquire(&test_lock);
	/* another thread finds the mutex free: acquire did not take it */
	ta = lock_probe(&test_lock);
	cr_assert_eq(ta.ret, 0, "inactive acquire locked the mutex");
	cr_assert(p4u_lock_held(&test_lock));
	p4u_lock_release(&test_lock);
	cr_assert_not(p4u_lock_held(&test_lock));
	p4u_lock_fini(&test_lock);
}

Test(lock, active_takes_the_mutex)
{
	struct trylock_arg ta;

	p4u_lock_init(&test_lock, true);
	p4u_lock_acquire(&test_lock);
	ta = lock_probe(&test_lock);
	cr_assert_eq(ta.ret, EBUSY, "active acquire left the mutex free");
	p4u_lock_release(&test_lock);
	ta = lock_probe(&test_lock);
	cr_assert_eq(ta.ret, 0, "release left the mutex locked");
	p4u_lock_fini(&test_lock);
}

/*
 * Owner tracking works in every build, whatever the includer's
 * ENABLE_DEBUG (this file does not include config.h): the holder sees the
 * lock held, another thread does not, and release clears it.
 */
Test(lock, held_tracks_owner_in_every_build)
{
	struct trylock_arg ta;

	p4u_lock_init(&test_lock, true);
	cr_assert_not(p4u_lock_held(&test_lock));
	p4u_lock_acquire(&test_lock);
	cr_assert(p4u_lock_held(&test_lock));
	p4u_lock_assert_held(&test_lock);
	ta = lock_probe(&test_lock);
	cr_assert_not(ta.held, "a thread that does not hold it sees it held");
	p4u_lock_release(&test_lock);
	cr_assert_not(p4u_lock_held(&test_lock));
	p4u_lock_fini(&test_lock);
}

#define LOCK_ITERS 1000000

static volatile uint64_t lock_counter;

static void *lock_count_thread(void *arg)
{
	struct p4u_lock *lock = arg;
	int i;

	for (i = 0; i < LOCK_ITERS; i++) {
		p4u_lock_acquire(lock);
		/* read, then write: lost updates if two threads get in */
		lock_counter = lock_counter + 1;
		p4u_lock_release(lock);
	}
	return NULL;
}

Test(lock, active_excludes)
{
	pthread_t thr[2];
	int i;

	p4u_lock_init(&test_lock, true);
	lock_counter = 0;
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&thr[i], NULL, lock_count_thread,
					    &test_lock), 0);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_join(thr[i], NULL), 0);
	cr_assert_eq(lock_counter, 2ULL * LOCK_ITERS,
		     "counter %llu, want %llu", (unsigned long long)lock_counter,
		     2ULL * LOCK_ITERS);
	p4u_lock_fini(&test_lock);
}

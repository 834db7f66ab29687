/*
 * p4u_list.h - intrusive circular doubly linked lists.
 *
 * The head is a sentinel node; an empty list points at itself. A node that
 * is on no list is kept self-linked (p4u_list_node_init / p4u_list_remove)
 * so p4u_list_node_linked() can tell. Nothing here allocates.
 */
#ifndef P4U_LIST_H
#define P4U_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "p4u_compiler.h"

struct p4u_list {
	struct p4u_list *next;
	struct p4u_list *prev;
};

#define P4U_LIST_INITIALIZER(name)	{ &(name), &(name) }

static inline void p4u_list_init(struct p4u_list *head)
{
	head->next = head;
	head->prev = head;
}

#define p4u_list_node_init p4u_list_init

static inline bool p4u_list_empty(const struct p4u_list *head)
{
	return head->next == head;
}

static inline bool p4u_list_node_linked(const struct p4u_list *node)
{
	return node->next != node;
}

static inline void p4u_list_insert_between(struct p4u_list *node,
					   struct p4u_list *prev,
					   struct p4u_list *next)
{
	node->next = next;
	node->prev = prev;
	prev->next = node;
	next->prev = node;
}

static inline void p4u_list_insert_head(struct p4u_list *head,
					struct p4u_list *node)
{
	p4u_list_insert_between(node, head, head->next);
}

static inline void p4u_list_insert_tail(struct p4u_list *head,
					struct p4u_list *node)
{
	p4u_list_insert_between(node, head->prev, head);
}

/* Insert node just before pos (pos may be the head: then it is a tail add). */
static inline void p4u_list_insert_before(struct p4u_list *pos,
					  struct p4u_list *node)
{
	p4u_list_insert_between(node, pos->prev, pos);
}

static inline void p4u_list_remove(struct p4u_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->next = node;
	node->prev = node;
}

/* Make node the first of head's list, the nodes before it going to the
 * end in order: a round-robin walk starts again where it stopped. */
static inline void p4u_list_rotate_to(struct p4u_list *head,
				      struct p4u_list *node)
{
	p4u_list_remove(head);
	p4u_list_insert_before(node, head);
}

static inline struct p4u_list *p4u_list_pop_head(struct p4u_list *head)
{
	struct p4u_list *node;

	if (p4u_list_empty(head))
		return NULL;
	node = head->next;
	p4u_list_remove(node);
	return node;
}

/* Move every node of src to the tail of dst, keeping their order. */
static inline void p4u_list_splice_tail(struct p4u_list *dst,
					struct p4u_list *src)
{
	if (p4u_list_empty(src))
		return;
	src->next->prev = dst->prev;
	dst->prev->next = src->next;
	src->prev->next = dst;
	dst->prev = src->prev;
	p4u_list_init(src);
}

static inline size_t p4u_list_length(const struct p4u_list *head)
{
	const struct p4u_list *node;
	size_t n = 0;

	for (node = head->next; node != head; node = node->next)
		n++;
	return n;
}

#define p4u_list_first_entry(head, type, field) \
	(p4u_list_empty(head) ? NULL : container_of((head)->next, type, field))

#define p4u_list_foreach(head, node) \
	for ((node) = (head)->next; (node) != (head); (node) = (node)->next)

/* Safe against removal of the current node. */
#define p4u_list_foreach_safe(head, node, tmp) \
	for ((node) = (head)->next, (tmp) = (node)->next; (node) != (head); \
	     (node) = (tmp), (tmp) = (node)->next)

/*
 * The entry walks never form container_of() of the head: that pointer is
 * outside any object (undefined behaviour, and GCC's -Warray-bounds says
 * so when it can see the list is empty). They walk hidden node pointers,
 * named per line, and set pos only for real nodes. The head expression is
 * evaluated once. After a walk that ran to the end, pos is not meaningful.
 */
#define P4U_LIST_CAT_(a, b)	a##b
#define P4U_LIST_CAT(a, b)	P4U_LIST_CAT_(a, b)
#define P4U_LIST_TMP(name)	P4U_LIST_CAT(p4u_list_##name##_, __LINE__)

#define p4u_list_foreach_entry(head, pos, type, field)			\
	p4u_list_foreach_entry_(head, pos, type, field,			\
				P4U_LIST_TMP(hd), P4U_LIST_TMP(nd))

#define p4u_list_foreach_entry_(head, pos, type, field, h_, n_)		\
	for (struct p4u_list *h_ = (head), *n_ = h_->next;		\
	     n_ != h_ && ((pos) = container_of(n_, type, field), 1);	\
	     n_ = n_->next)

/*
 * Safe against removal of pos. tmp is the next entry (NULL at the last
 * one), kept for callers; the walk itself follows a hidden next pointer.
 */
#define p4u_list_foreach_entry_safe(head, pos, tmp, type, field)		\
	p4u_list_foreach_entry_safe_(head, pos, tmp, type, field,		\
				     P4U_LIST_TMP(hd), P4U_LIST_TMP(nd),	\
				     P4U_LIST_TMP(nx))

#define p4u_list_foreach_entry_safe_(head, pos, tmp, type, field, h_, n_,	\
				     x_)					\
	for (struct p4u_list *h_ = (head), *n_ = h_->next, *x_ = n_->next; \
	     n_ != h_ && ((pos) = container_of(n_, type, field),		\
			  (tmp) = x_ != h_ ? container_of(x_, type, field) :	\
					     NULL, (void)(tmp), 1);		\
	     n_ = x_, x_ = n_->next)

#endif /* P4U_LIST_H */

/*
 * expr_eval.c — evaluation of checked expressions against items: conditions
 * and filters, projections, and updates.
 *
 * Comparison semantics follow DynamoDB: a missing attribute or operands of
 * different types make a comparison false (never an error), except <>,
 * which is true unless both sides exist and are equal.  Updates compute
 * every new value from the item as it was before the update, and report
 * problems in DynamoDB's order: a wrong operand type anywhere, then (clause
 * by clause from the last) a path that cannot be written, then an attribute
 * a SET reads that does not exist, then numbers out of range.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "common/errors.h"
#include "expr/expr_int.h"

#define UPDATE_TYPE_ERROR "An operand in the update expression has an incorrect data type"
/* AttributeUpdates ADD/DELETE on an attribute of another type */
#define LEGACY_TYPE_ERROR "Type mismatch for attribute to update"
#define UPDATE_MISSING_ERROR "The provided expression refers to an attribute that does not exist in the item"
#define UPDATE_PATH_ERROR "The document path provided in the update expression is invalid for update"

/* ---- paths ---- */

/* The value at the first n steps of a path in item (NULL: absent). */
static DynValue *
lookup_prefix(const DynValue *item, const DynExpr *path, int n)
{
	const DynValue *cur = item;
	int			i;

	if (item == NULL)
		return NULL;
	for (i = 0; i < n; i++)
	{
		const DynPathElem *el = &path->path[i];

		if (el->is_index)
		{
			if (cur->type != DYN_L || el->index < 0 || el->index >= cur->n)
				return NULL;
			cur = &cur->u.elems[el->index];
		}
		else
		{
			if (cur->type != DYN_M)
				return NULL;
			cur = DynMapGet(cur, el->name, el->namelen);
			if (cur == NULL)
				return NULL;
		}
	}
	return (DynValue *) cur;
}

/* The value of a path in an item (NULL: absent). */
DynValue *
DynPathLookup(const DynValue *item, const DynExpr *path)
{
	return lookup_prefix(item, path, path->npath);
}

/* ---- conditions ---- */

/* DynamoDB's size() of a string: its length in UTF-16 code units. */
static int64
string_length(const char *s, int len)
{
	int64		n = 0;
	int			i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if ((c & 0xC0) == 0x80)
			continue;
		n += ((c & 0xF8) == 0xF0) ? 2 : 1;
	}
	return n;
}

/* The value of an operand for an item (NULL: absent / not defined). */
static DynValue *
operand_value(DynExpr *e, const DynValue *item)
{
	switch (e->kind)
	{
		case DYN_EXPR_VALUE:
			return e->value;
		case DYN_EXPR_PATH:
			return DynPathLookup(item, e);
		case DYN_EXPR_FUNC:
			if (e->func == DYN_FN_SIZE)
			{
				DynValue   *v = operand_value(e->args[0], item);

				if (v == NULL)
					return NULL;
				switch (v->type)
				{
					case DYN_S:
						return DynMakeNumberFromInt(string_length(v->u.str.data, v->u.str.len));
					case DYN_B:
						return DynMakeNumberFromInt(v->u.str.len);
					case DYN_SS:
					case DYN_NS:
					case DYN_BS:
					case DYN_L:
					case DYN_M:
						return DynMakeNumberFromInt(v->n);
					default:
						return NULL;
				}
			}
			return NULL;
		default:
			return NULL;
	}
}

/* Order of two values when both are the same scalar type; false otherwise. */
static bool
ordered(const DynValue *a, const DynValue *b, int *cmp)
{
	if (a == NULL || b == NULL || a->type != b->type)
		return false;
	if (a->type != DYN_S && a->type != DYN_N && a->type != DYN_B)
		return false;
	*cmp = DynScalarCompare(a, b);
	return true;
}

/* Whether two values are equal (same type, same contents). */
static bool
equal_values(const DynValue *a, const DynValue *b)
{
	return a != NULL && b != NULL && a->type == b->type && DynValueEquals(a, b);
}

/* Whether hay contains needle as a byte substring. */
static bool
bytes_contain(const char *hay, int haylen, const char *needle, int needlelen)
{
	int			i;

	if (needlelen == 0)
		return true;
	for (i = 0; i + needlelen <= haylen; i++)
		if (memcmp(hay + i, needle, needlelen) == 0)
			return true;
	return false;
}

/* DynamoDB's contains(a, b). */
static bool
eval_contains(const DynValue *a, const DynValue *b)
{
	int			i;

	if (a == NULL || b == NULL)
		return false;
	switch (a->type)
	{
		case DYN_S:
		case DYN_B:
			return b->type == a->type &&
				bytes_contain(a->u.str.data, a->u.str.len, b->u.str.data, b->u.str.len);
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
			if (b->type != (a->type == DYN_SS ? DYN_S : a->type == DYN_NS ? DYN_N : DYN_B))
				return false;
			for (i = 0; i < a->n; i++)
				if (DynValueEquals(&a->u.elems[i], b))
					return true;
			return false;
		case DYN_L:
			for (i = 0; i < a->n; i++)
				if (equal_values(&a->u.elems[i], b))
					return true;
			return false;
		default:
			return false;
	}
}

/* Evaluate a condition node. */
static bool
eval_node(DynExpr *e, const DynValue *item)
{
	DynValue   *a,
			   *b;
	int			cmp,
				cmp2,
				i;

	check_stack_depth();
	switch (e->kind)
	{
		case DYN_EXPR_AND:
			return eval_node(e->args[0], item) && eval_node(e->args[1], item);
		case DYN_EXPR_OR:
			return eval_node(e->args[0], item) || eval_node(e->args[1], item);
		case DYN_EXPR_NOT:
			return !eval_node(e->args[0], item);
		case DYN_EXPR_CMP:
			a = operand_value(e->args[0], item);
			b = operand_value(e->args[1], item);
			switch (e->cmp)
			{
				case DYN_CMP_EQ:
					return equal_values(a, b);
				case DYN_CMP_NE:
					return !equal_values(a, b);
				default:
					if (!ordered(a, b, &cmp))
						return false;
					if (e->cmp == DYN_CMP_LT)
						return cmp < 0;
					if (e->cmp == DYN_CMP_LE)
						return cmp <= 0;
					if (e->cmp == DYN_CMP_GT)
						return cmp > 0;
					return cmp >= 0;
			}
		case DYN_EXPR_BETWEEN:
			a = operand_value(e->args[0], item);
			if (!ordered(operand_value(e->args[1], item), a, &cmp) ||
				!ordered(a, operand_value(e->args[2], item), &cmp2))
				return false;
			return cmp <= 0 && cmp2 <= 0;
		case DYN_EXPR_IN:
			a = operand_value(e->args[0], item);
			if (a == NULL)
				return false;
			for (i = 1; i < e->nargs; i++)
				if (equal_values(a, operand_value(e->args[i], item)))
					return true;
			return false;
		case DYN_EXPR_FUNC:
			a = operand_value(e->args[0], item);
			switch (e->func)
			{
				case DYN_FN_ATTRIBUTE_EXISTS:
					return a != NULL;
				case DYN_FN_ATTRIBUTE_NOT_EXISTS:
					return a == NULL;
				case DYN_FN_ATTRIBUTE_TYPE:
					{
						const char *tn;

						b = operand_value(e->args[1], item);
						if (a == NULL || b == NULL || b->type != DYN_S)
							return false;
						tn = DynTypeName(a->type);
						return strlen(tn) == (size_t) b->u.str.len &&
							memcmp(tn, b->u.str.data, b->u.str.len) == 0;
					}
				case DYN_FN_BEGINS_WITH:
					b = operand_value(e->args[1], item);
					if (a == NULL || b == NULL || a->type != b->type ||
						(a->type != DYN_S && a->type != DYN_B))
						return false;
					return a->u.str.len >= b->u.str.len &&
						memcmp(a->u.str.data, b->u.str.data, b->u.str.len) == 0;
				case DYN_FN_CONTAINS:
					return eval_contains(a, operand_value(e->args[1], item));
				case DYN_FN_NOT_CONTAINS:
					/* legacy NOT_CONTAINS is false on a missing attribute */
					return a != NULL && !eval_contains(a, operand_value(e->args[1], item));
				default:
					return false;
			}
		default:
			return false;
	}
}

/* Evaluate a condition against an item (NULL: the item does not exist). */
bool
DynEvalCondition(DynExpr *cond, const DynValue *item)
{
	if (cond == NULL)
		return true;
	return eval_node(cond, item);
}

/* ---- path trees (projection and update writes) ---- */

typedef struct PNode
{
	bool		is_index;
	int			index;
	const char *name;
	int			namelen;
	bool		leaf;			/* a path ends here */
	DynValue   *value;			/* update: the value to write; NULL removes */
	int			nkids;
	int			cap;
	struct PNode **kids;
	bool		done;			/* scratch while rebuilding */
} PNode;

/* The child of n for a path step, created when missing. */
static PNode *
pnode_child(PNode *n, const DynPathElem *el)
{
	int			i;
	PNode	   *k;

	for (i = 0; i < n->nkids; i++)
	{
		k = n->kids[i];
		if (k->is_index == el->is_index &&
			(el->is_index ? k->index == el->index :
			 (k->namelen == el->namelen && memcmp(k->name, el->name, el->namelen) == 0)))
			return k;
	}
	if (n->nkids == n->cap)
	{
		n->cap = n->cap ? n->cap * 2 : 4;
		n->kids = n->kids ? repalloc(n->kids, sizeof(PNode *) * n->cap) :
			palloc(sizeof(PNode *) * n->cap);
	}
	k = palloc0(sizeof(PNode));
	k->is_index = el->is_index;
	k->index = el->index;
	k->name = el->name;
	k->namelen = el->namelen;
	n->kids[n->nkids++] = k;
	return k;
}

/* Insert a path into a tree; returns its end node. */
static PNode *
pnode_insert(PNode *root, const DynExpr *path)
{
	PNode	   *n = root;
	int			i;

	for (i = 0; i < path->npath; i++)
		n = pnode_child(n, &path->path[i]);
	n->leaf = true;
	return n;
}

/* qsort comparator of list-index nodes. */
static int
pnode_index_cmp(const void *a, const void *b)
{
	const PNode *x = *(const PNode *const *) a;
	const PNode *y = *(const PNode *const *) b;

	return (x->index > y->index) - (x->index < y->index);
}

/* Copy the parts of v selected by the tree node n (NULL when nothing is left). */
static DynValue *
project_value(const DynValue *v, PNode *n)
{
	int			i;

	check_stack_depth();
	if (n->leaf)
		return (DynValue *) v;
	if (v->type == DYN_M)
	{
		DynValue   *m = DynMakeMap(n->nkids);

		for (i = 0; i < v->n; i++)
		{
			int			k;

			for (k = 0; k < n->nkids; k++)
			{
				PNode	   *kid = n->kids[k];

				if (!kid->is_index && kid->namelen == v->u.attrs[i].namelen &&
					memcmp(kid->name, v->u.attrs[i].name, kid->namelen) == 0)
				{
					DynValue   *sub = project_value(v->u.attrs[i].value, kid);

					if (sub)
						DynMapAppend(m, v->u.attrs[i].name, v->u.attrs[i].namelen, sub);
					break;
				}
			}
		}
		return m->n > 0 ? m : NULL;
	}
	if (v->type == DYN_L)
	{
		PNode	  **idx = palloc(sizeof(PNode *) * Max(n->nkids, 1));
		int			nidx = 0;
		DynValue   *l;

		for (i = 0; i < n->nkids; i++)
			if (n->kids[i]->is_index)
				idx[nidx++] = n->kids[i];
		qsort(idx, nidx, sizeof(PNode *), pnode_index_cmp);
		l = palloc0(sizeof(DynValue));
		l->type = DYN_L;
		l->u.elems = palloc0(sizeof(DynValue) * Max(nidx, 1));
		for (i = 0; i < nidx; i++)
		{
			DynValue   *sub;

			if (idx[i]->index >= v->n)
				continue;
			sub = project_value(&v->u.elems[idx[i]->index], idx[i]);
			if (sub)
				l->u.elems[l->n++] = *sub;
		}
		pfree(idx);
		return l->n > 0 ? l : NULL;
	}
	return NULL;
}

/* Project an item onto a set of paths. */
static DynValue *
project_paths(DynExpr **paths, int npaths, const DynValue *item)
{
	PNode		root;
	DynValue   *out;
	int			i;

	memset(&root, 0, sizeof(root));
	for (i = 0; i < npaths; i++)
		pnode_insert(&root, paths[i]);
	if (item == NULL)
		return DynMakeMap(0);
	out = project_value(item, &root);
	return out ? out : DynMakeMap(0);
}

/* Project an item (a new map holding only the projected paths). */
DynValue *
DynApplyProjection(DynExpr *projection, const DynValue *item)
{
	if (projection == NULL)
		return (DynValue *) item;
	return project_paths(projection->args, projection->nargs, item);
}

/* ---- updates ---- */

/* Rebuild v with the writes of tree node n applied. */
static DynValue *
apply_writes(const DynValue *v, PNode *n)
{
	int			i,
				k;

	check_stack_depth();
	for (k = 0; k < n->nkids; k++)
		n->kids[k]->done = false;
	if (v->type == DYN_M)
	{
		DynValue   *m = DynMakeMap(v->n + n->nkids);

		for (i = 0; i < v->n; i++)
		{
			DynAttr    *at = &v->u.attrs[i];
			PNode	   *kid = NULL;

			for (k = 0; k < n->nkids; k++)
			{
				if (!n->kids[k]->is_index && n->kids[k]->namelen == at->namelen &&
					memcmp(n->kids[k]->name, at->name, at->namelen) == 0)
				{
					kid = n->kids[k];
					break;
				}
			}
			if (kid == NULL)
				DynMapAppend(m, at->name, at->namelen, at->value);
			else
			{
				kid->done = true;
				if (kid->leaf)
				{
					if (kid->value)
						DynMapAppend(m, at->name, at->namelen, kid->value);
				}
				else
					DynMapAppend(m, at->name, at->namelen, apply_writes(at->value, kid));
			}
		}
		for (k = 0; k < n->nkids; k++)
		{
			PNode	   *kid = n->kids[k];

			if (!kid->done && kid->leaf && kid->value && !kid->is_index)
				DynMapAppend(m, kid->name, kid->namelen, kid->value);
		}
		return m;
	}
	if (v->type == DYN_L)
	{
		DynValue   *l = palloc0(sizeof(DynValue));
		PNode	  **app = palloc(sizeof(PNode *) * Max(n->nkids, 1));
		int			napp = 0;

		l->type = DYN_L;
		l->u.elems = palloc0(sizeof(DynValue) * (v->n + n->nkids + 1));
		for (i = 0; i < v->n; i++)
		{
			PNode	   *kid = NULL;

			for (k = 0; k < n->nkids; k++)
				if (n->kids[k]->is_index && n->kids[k]->index == i)
				{
					kid = n->kids[k];
					break;
				}
			if (kid == NULL)
				l->u.elems[l->n++] = v->u.elems[i];
			else if (kid->leaf)
			{
				if (kid->value)
					l->u.elems[l->n++] = *kid->value;
			}
			else
				l->u.elems[l->n++] = *apply_writes(&v->u.elems[i], kid);
		}
		/* SET past the end appends, in index order */
		for (k = 0; k < n->nkids; k++)
			if (n->kids[k]->is_index && n->kids[k]->index >= v->n &&
				n->kids[k]->leaf && n->kids[k]->value)
				app[napp++] = n->kids[k];
		qsort(app, napp, sizeof(PNode *), pnode_index_cmp);
		for (k = 0; k < napp; k++)
			l->u.elems[l->n++] = *app[k]->value;
		pfree(app);
		return l;
	}
	return (DynValue *) v;
}

/* Whether the parent of a path exists and is the container its last step needs. */
static bool
writable(const DynValue *item, const DynExpr *path)
{
	DynValue   *parent;

	if (path->npath == 1)
		return true;
	parent = lookup_prefix(item, path, path->npath - 1);
	if (parent == NULL)
		return false;
	return path->path[path->npath - 1].is_index ? parent->type == DYN_L : parent->type == DYN_M;
}

/* Raise an update error. */
static void
update_error(const char *msg)
{
	DynValidationError("%s", msg);
}

/* a + b or a - b on numbers, raising DynamoDB's message on overflow. */
static DynValue *
add_numbers(const DynValue *a, const DynValue *b, bool subtract)
{
	char	   *res = NULL;
	const char *err = DynNumberAdd(a->u.str.data, a->u.str.len, b->u.str.data, b->u.str.len,
								   subtract, &res);

	if (err)
		DynValidationError("%s", err);
	return DynMakeString(DYN_N, res, strlen(res));
}

/*
 * The value a SET action writes, from the item as it was.  Wrong operand
 * types raise at once; a missing attribute sets *missing and returns NULL.
 */
static DynValue *
set_value(DynExpr *e, const DynValue *item, bool *missing)
{
	DynValue   *a,
			   *b;

	check_stack_depth();
	switch (e->kind)
	{
		case DYN_EXPR_VALUE:
			return e->value;
		case DYN_EXPR_PATH:
			a = DynPathLookup(item, e);
			if (a == NULL)
				*missing = true;
			return a;
		case DYN_EXPR_ARITH:
			a = set_value(e->args[0], item, missing);
			if (*missing)
				return NULL;
			if (a->type != DYN_N)
				update_error(UPDATE_TYPE_ERROR);
			b = set_value(e->args[1], item, missing);
			if (*missing)
				return NULL;
			if (b->type != DYN_N)
				update_error(UPDATE_TYPE_ERROR);
			return add_numbers(a, b, e->subtract);
		case DYN_EXPR_FUNC:
			if (e->func == DYN_FN_IF_NOT_EXISTS)
			{
				a = DynPathLookup(item, e->args[0]);
				return a ? a : set_value(e->args[1], item, missing);
			}
			if (e->func == DYN_FN_LIST_APPEND)
			{
				DynValue   *l;

				a = set_value(e->args[0], item, missing);
				if (*missing)
					return NULL;
				if (a->type != DYN_L)
					update_error(UPDATE_TYPE_ERROR);
				b = set_value(e->args[1], item, missing);
				if (*missing)
					return NULL;
				if (b->type != DYN_L)
					update_error(UPDATE_TYPE_ERROR);
				l = palloc0(sizeof(DynValue));
				l->type = DYN_L;
				l->n = a->n + b->n;
				l->u.elems = palloc0(sizeof(DynValue) * Max(l->n, 1));
				if (a->n)
					memcpy(l->u.elems, a->u.elems, sizeof(DynValue) * a->n);
				if (b->n)
					memcpy(l->u.elems + a->n, b->u.elems, sizeof(DynValue) * b->n);
				return l;
			}
			update_error(UPDATE_TYPE_ERROR);
			return NULL;
		default:
			update_error(UPDATE_TYPE_ERROR);
			return NULL;
	}
}

/* Whether set s holds an element equal to x. */
static bool
set_has(const DynValue *s, const DynValue *x)
{
	int			i;

	for (i = 0; i < s->n; i++)
		if (DynValueEquals(&s->u.elems[i], x))
			return true;
	return false;
}

/* a ∪ b (union) or a \ b (difference) of two sets of one type. */
static DynValue *
set_combine(const DynValue *a, const DynValue *b, bool difference)
{
	DynValue   *r = palloc0(sizeof(DynValue));
	int			i;

	r->type = a->type;
	r->u.elems = palloc0(sizeof(DynValue) * (a->n + b->n + 1));
	for (i = 0; i < a->n; i++)
		if (!difference || !set_has(b, &a->u.elems[i]))
			r->u.elems[r->n++] = a->u.elems[i];
	if (!difference)
		for (i = 0; i < b->n; i++)
			if (!set_has(a, &b->u.elems[i]))
				r->u.elems[r->n++] = b->u.elems[i];
	return r;
}

/* Apply an update to an item; returns the new item. */
DynValue *
DynApplyUpdate(DynExpr *update, const DynValue *item)
{
	int			n = update->nactions;
	DynValue  **vals = palloc0(sizeof(DynValue *) * Max(n, 1));
	bool	   *missing = palloc0(sizeof(bool) * Max(n, 1));
	bool	   *skip = palloc0(sizeof(bool) * Max(n, 1));
	PNode		root;
	int			i,
				cl;
	DynValue   *empty = NULL;

	if (item == NULL)
		item = empty = DynMakeMap(0);

	/* a parent that exists but is the wrong container */
	for (i = 0; i < n; i++)
	{
		DynExpr    *path = update->actions[i].path;

		if (path->npath > 1 && lookup_prefix(item, path, path->npath - 1) != NULL &&
			!writable(item, path))
			update_error(UPDATE_PATH_ERROR);
	}

	/* operand types */
	for (i = 0; i < n; i++)
	{
		DynUpdateAction *a = &update->actions[i];

		if (a->op == DYN_UPD_SET)
			vals[i] = set_value(a->value, item, &missing[i]);
		else if (a->op == DYN_UPD_ADD || a->op == DYN_UPD_DELETE)
		{
			DynValue   *v = a->value->value;
			DynValue   *cur = writable(item, a->path) ? DynPathLookup(item, a->path) : NULL;

			if (v == NULL)
				continue;
			if (cur)
			{
				bool		ok;

				if (a->op == DYN_UPD_ADD)
					ok = (v->type == DYN_N && cur->type == DYN_N) ||
						(cur->type == v->type && DynTypeIsSet(v->type)) ||
						(a->legacy && cur->type == DYN_L && v->type == DYN_L);
				else
					ok = cur->type == v->type && DynTypeIsSet(v->type);
				if (!ok)
					update_error(a->legacy ? LEGACY_TYPE_ERROR : UPDATE_TYPE_ERROR);
				if (a->op == DYN_UPD_ADD && v->type == DYN_N)
					vals[i] = add_numbers(cur, v, false);
				else if (a->op == DYN_UPD_ADD && v->type == DYN_L)
				{
					DynValue   *l = palloc0(sizeof(DynValue));

					l->type = DYN_L;
					l->n = cur->n + v->n;
					l->u.elems = palloc0(sizeof(DynValue) * Max(l->n, 1));
					if (cur->n)
						memcpy(l->u.elems, cur->u.elems, sizeof(DynValue) * cur->n);
					if (v->n)
						memcpy(l->u.elems + cur->n, v->u.elems, sizeof(DynValue) * v->n);
					vals[i] = l;
				}
				else if (a->op == DYN_UPD_ADD)
					vals[i] = set_combine(cur, v, false);
				else
				{
					vals[i] = set_combine(cur, v, true);
					if (vals[i]->n == 0)
						vals[i] = NULL; /* an emptied set is removed */
				}
			}
			else if (a->op == DYN_UPD_ADD)
			{
				if (a->legacy && v->type != DYN_N && v->type != DYN_L && !DynTypeIsSet(v->type))
					update_error(UPDATE_TYPE_ERROR);
				vals[i] = v;
			}
			else
				skip[i] = true; /* DELETE from a missing set: nothing */
		}
	}

	/* clause by clause from the last: unwritable paths, then missing attributes */
	for (cl = update->nclauses - 1; cl >= 0; cl--)
	{
		for (i = 0; i < n; i++)
			if (update->actions[i].clause == cl && !writable(item, update->actions[i].path))
				update_error(UPDATE_PATH_ERROR);
		for (i = 0; i < n; i++)
			if (update->actions[i].clause == cl && missing[i])
				update_error(UPDATE_MISSING_ERROR);
	}

	/* build the new item */
	memset(&root, 0, sizeof(root));
	for (i = 0; i < n; i++)
	{
		DynUpdateAction *a = &update->actions[i];
		PNode	   *leaf;

		if (skip[i])
			continue;
		if (a->op == DYN_UPD_REMOVE && DynPathLookup(item, a->path) == NULL)
			continue;
		leaf = pnode_insert(&root, a->path);
		leaf->value = (a->op == DYN_UPD_REMOVE) ? NULL : vals[i];
	}
	pfree(vals);
	pfree(missing);
	pfree(skip);
	(void) empty;
	return apply_writes(item, &root);
}

/* The top-level attribute names an update writes, distinct, in order. */
int
DynUpdateTopLevelNames(DynExpr *update, const char ***names, int **namelens)
{
	int			n = 0;
	int			i,
				k;

	*names = palloc(sizeof(char *) * Max(update->nactions, 1));
	*namelens = palloc(sizeof(int) * Max(update->nactions, 1));
	for (i = 0; i < update->nactions; i++)
	{
		DynPathElem *el = &update->actions[i].path->path[0];
		bool		seen = false;

		for (k = 0; k < n; k++)
			if ((*namelens)[k] == el->namelen && memcmp((*names)[k], el->name, el->namelen) == 0)
				seen = true;
		if (!seen)
		{
			(*names)[n] = el->name;
			(*namelens)[n++] = el->namelen;
		}
	}
	return n;
}

/* The attributes of item an update touched (for UPDATED_OLD / UPDATED_NEW). */
DynValue *
DynUpdatedAttributes(DynExpr *update, const DynValue *item)
{
	DynExpr   **paths = palloc(sizeof(DynExpr *) * Max(update->nactions, 1));
	int			i;

	for (i = 0; i < update->nactions; i++)
		paths[i] = update->actions[i].path;
	return project_paths(paths, update->nactions, item);
}

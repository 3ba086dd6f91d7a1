/*
 * tests/unit/proto/check_attrs.c: the attributes of each NodeClass
 * (proto/attrs.h) against the per-class lists of Part 3 §5, written out
 * here class by class rather than attribute by attribute, so that a slip
 * in either form shows.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "proto/attrs.h"
#include "proto/types_gen.h"

/* The Base NodeClass's attributes (Part 3 §5.2), which every class has. */
static const uint32_t base[] = {
    UA_ATTR_NODEID, UA_ATTR_NODECLASS, UA_ATTR_BROWSENAME,
    UA_ATTR_DISPLAYNAME, UA_ATTR_DESCRIPTION, UA_ATTR_WRITEMASK,
    UA_ATTR_USERWRITEMASK, UA_ATTR_ROLEPERMISSIONS,
    UA_ATTR_USERROLEPERMISSIONS, UA_ATTR_ACCESSRESTRICTIONS,
};

struct nc_attrs {
    uint8_t  nc;
    uint32_t own[12];           /* besides the base ones; 0 ends */
};

static const struct nc_attrs classes[] = {
    { UA_NODECLASS_OBJECT, { UA_ATTR_EVENTNOTIFIER } },
    { UA_NODECLASS_VARIABLE,
      { UA_ATTR_VALUE, UA_ATTR_DATATYPE, UA_ATTR_VALUERANK,
        UA_ATTR_ARRAYDIMENSIONS, UA_ATTR_ACCESSLEVEL,
        UA_ATTR_USERACCESSLEVEL, UA_ATTR_MINIMUMSAMPLINGINTERVAL,
        UA_ATTR_HISTORIZING, UA_ATTR_ACCESSLEVELEX } },
    { UA_NODECLASS_METHOD, { UA_ATTR_EXECUTABLE, UA_ATTR_USEREXECUTABLE } },
    { UA_NODECLASS_OBJECTTYPE, { UA_ATTR_ISABSTRACT } },
    { UA_NODECLASS_VARIABLETYPE,
      { UA_ATTR_VALUE, UA_ATTR_DATATYPE, UA_ATTR_VALUERANK,
        UA_ATTR_ARRAYDIMENSIONS, UA_ATTR_ISABSTRACT } },
    { UA_NODECLASS_REFERENCETYPE,
      { UA_ATTR_ISABSTRACT, UA_ATTR_SYMMETRIC, UA_ATTR_INVERSENAME } },
    { UA_NODECLASS_DATATYPE,
      { UA_ATTR_ISABSTRACT, UA_ATTR_DATATYPEDEFINITION } },
    { UA_NODECLASS_VIEW,
      { UA_ATTR_CONTAINSNOLOOPS, UA_ATTR_EVENTNOTIFIER } },
};

static bool
listed(const struct nc_attrs *c, uint32_t aid)
{
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
        if (base[i] == aid)
            return true;
    for (size_t i = 0; i < 12 && c->own[i] != 0; i++)
        if (c->own[i] == aid)
            return true;
    return false;
}

START_TEST(test_each_class)
{
    for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
        for (uint32_t aid = 0; aid <= UA_ATTR_MAX + 1; aid++)
            ck_assert_msg(ua_attrs_valid(classes[k].nc, aid)
                              == listed(&classes[k], aid),
                          "class %u attribute %u", classes[k].nc, aid);
}
END_TEST

START_TEST(test_every_attribute_has_a_class)
{
    uint8_t all = 0;

    ck_assert_uint_eq(ua_attrs_classes[0], 0);
    for (uint32_t aid = 1; aid <= UA_ATTR_MAX; aid++) {
        ck_assert_uint_ne(ua_attrs_classes[aid], 0);
        all |= ua_attrs_classes[aid];
    }
    ck_assert_uint_eq(all, UA_ATTRS_ALL_CLASSES);
}
END_TEST

START_TEST(test_outside_the_ids)
{
    ck_assert(!ua_attrs_valid(UA_NODECLASS_VARIABLE, 0));
    ck_assert(!ua_attrs_valid(UA_NODECLASS_VARIABLE, UA_ATTR_MAX + 1));
    ck_assert(!ua_attrs_valid(UA_NODECLASS_VARIABLE, UINT32_MAX));
    /* Unspecified (0) is no class: it has nothing. */
    for (uint32_t aid = 0; aid <= UA_ATTR_MAX; aid++)
        ck_assert(!ua_attrs_valid(UA_NODECLASS_UNSPECIFIED, aid));
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Attributes by NodeClass");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Part 3 tables");
    tcase_add_test(tc, test_each_class);
    tcase_add_test(tc, test_every_attribute_has_a_class);
    tcase_add_test(tc, test_outside_the_ids);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

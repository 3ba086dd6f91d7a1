#!/usr/bin/env python3
"""Write tests/unit/broker/ns0_expected.h, the namespace-0 fixture.

Usage: make_ns0_expected.py SCHEMA_DIR OUT_FILE

A deliberately separate second reading of Opc.Ua.NodeSet2.xml for the
completeness test tests/unit/broker/check_ns0.c: plain regular expressions
over the XML text, no XML parser and nothing shared with
broker/gen/gen_ns0.py, so that a mistake in one reading shows up as a
difference instead of being copied into both.  It records the node count,
the reference count (after de-duplication, both directions) and a
deterministic selection of nodes (every ReferenceType, the nodes the
services depend on, a spread over every node class and the id range, and
the first and last node with each kind of Value) with their attributes and
a description of the Value.

Run it by hand after a schema update, check the differences, commit the
result.  Python 3 standard library only.
"""

import base64
import datetime
import os
import re
import sys

CLASS = {'UAObject': 1, 'UAVariable': 2, 'UAMethod': 4, 'UAObjectType': 8,
         'UAVariableType': 16, 'UAReferenceType': 32, 'UADataType': 64,
         'UAView': 128}
# Built-in type ids of the value elements (Part 6 §5.1.2 Table 1).
BUILTIN = {'Boolean': 1, 'Int32': 6, 'UInt32': 7, 'String': 12,
           'DateTime': 13, 'ByteString': 15, 'LocalizedText': 21,
           'ExtensionObject': 22}


def unxml(s):
    return (s.replace('&lt;', '<').replace('&gt;', '>')
            .replace('&quot;', '"').replace('&apos;', "'")
            .replace('&amp;', '&'))


def num(nodeid):
    m = re.match(r'^(?:ns=0;)?i=(\d+)$', nodeid)
    return int(m.group(1)) if m else None


def main(argv):
    if len(argv) != 3:
        sys.exit('usage: make_ns0_expected.py SCHEMA_DIR OUT_FILE')
    schema, out = argv[1], argv[2]
    xml = open(os.path.join(schema, 'Opc.Ua.NodeSet2.xml'),
               encoding='utf-8').read()
    if not re.search(r'<Model ModelUri="http://opcfoundation.org/UA/"[^>]*'
                     r'Version="1\.05\.03" PublicationDate="2023-12-15T', xml):
        sys.exit('make_ns0_expected.py: not the 1.05.03 (2023-12-15) NodeSet')

    aliases = dict(re.findall(r'<Alias Alias="([^"]+)">([^<]+)</Alias>', xml))

    def resolve(s):
        return num(aliases.get(s, s))

    # Binary encoding ids of the ExtensionObject bodies, from NodeIds.csv.
    csv_ids = {}
    for line in open(os.path.join(schema, 'NodeIds.csv'), encoding='utf-8'):
        parts = line.strip().split(',')
        if len(parts) == 3:
            csv_ids[parts[0]] = int(parts[1])

    nodes = {}
    block = re.compile(r'<(UA(?:Object|Variable|Method|View|ObjectType|'
                       r'VariableType|DataType|ReferenceType))\s([^>]*?)'
                       r'(?:/>|>(.*?)</\1>)', re.S)
    triples = set()
    for m in block.finditer(xml):
        tag, attrs, body = m.group(1), m.group(2), m.group(3) or ''
        a = dict(re.findall(r'(\w+)="([^"]*)"', attrs))
        nid = num(a['NodeId'])
        assert nid is not None and nid not in nodes, a['NodeId']
        value = re.search(r'<Value>(.*)</Value>', body, re.S)    # outermost
        head = re.sub(r'<Value>.*</Value>|<Definition.*?</Definition>', '',
                      body, flags=re.S)
        dn = re.search(r'<DisplayName(?:\s[^>]*)?>([^<]*)</DisplayName>',
                       head)
        bn = unxml(a['BrowseName'])
        bn = re.sub(r'^0:', '', bn)
        n = {'id': nid, 'cls': CLASS[tag], 'bn': bn,
             'dn': unxml(dn.group(1)), 'dt': 0, 'vr': 0,
             'abs': 1 if a.get('IsAbstract') == 'true' else 0,
             'sym': 1 if a.get('Symmetric') == 'true' else 0,
             'val': None, 'td': 0, 'super': 0, 'props': []}
        if tag in ('UAVariable', 'UAVariableType'):
            n['dt'] = resolve(a.get('DataType', 'i=24'))
            n['vr'] = int(a.get('ValueRank', '-1'))
        refs = re.findall(r'<Reference ReferenceType="([^"]+)"'
                          r'(?: IsForward="(true|false)")?>([^<]+)'
                          r'</Reference>', head)
        assert len(refs) == head.count('<Reference '), nid
        for rt, fwd, tgt in refs:
            t, other = resolve(rt), resolve(tgt.strip())
            if fwd == 'false':
                triples.add((other, t, nid))
                if t == 45:
                    n['super'] = other
            else:
                triples.add((nid, t, other))
                if t == 40:
                    n['td'] = other
                if t == 46:
                    n['props'].append(other)
        if value:
            n['val'] = describe(value.group(1), csv_ids)
        nodes[nid] = n

    byclass = {}
    for nid in sorted(nodes):
        byclass.setdefault(nodes[nid]['cls'], []).append(nid)

    def spread(ids, k):
        """k ids at even steps over a sorted list (first and last too)."""
        if len(ids) <= k:
            return list(ids)
        return [ids[round(i * (len(ids) - 1) / (k - 1))] for i in range(k)]

    def props_named(nid, *names):
        return [p for p in nodes[nid]['props'] if nodes[p]['bn'] in names]

    pick = [84, 85, 86, 87, 2253, 2256, 2258, 2255, 2268, 11704]
    pick += list(range(1, 26))
    pick += [29, 45, 47, 46, 35, 33, 31, 257]
    pick += props_named(257, 'EnumStrings', 'EnumValues')
    pick += [852] + props_named(852, 'EnumStrings', 'EnumValues')
    pick += [58, 61, 62, 63, 68, 2004, 11492]
    pick += props_named(11492, 'InputArguments', 'OutputArguments')
    for mid in spread(byclass[4], 12):
        pick += [mid] + props_named(mid, 'InputArguments', 'OutputArguments')
    pick += byclass[32]                                 # every ReferenceType
    pick += spread(byclass[16], 20)
    pick += spread(byclass[8], 20)
    pick += spread(byclass[64], 30)
    pick += spread(byclass[1], 25)
    pick += spread(byclass[2], 40)
    pick += [11562, 12097, 15957]       # "<...>" and "0:..." BrowseNames
    pick += [15960, 15964]              # the DateTime, the empty String
    kinds = {}
    for nid in sorted(nodes):
        v = nodes[nid]['val']
        if v:
            kinds.setdefault((v['type'], v['array']), []).append(nid)
    for k in sorted(kinds):
        pick += kinds[k][:2] + kinds[k][-1:]
    seen, sel = set(), []
    for nid in pick:
        if nid not in seen:
            seen.add(nid)
            sel.append(nid)
    sel.sort()

    write(schema, out, nodes, sel, 2 * len(triples))
    print('make_ns0_expected.py: %d nodes, %d references (both directions), '
          '%d fixture entries' % (len(nodes), 2 * len(triples), len(sel)))


def describe(v, csv_ids):
    """The Variant a <Value> becomes: built-in type, array, length, and one
    checkable scalar (first element for arrays)."""
    v = v.strip()
    m = re.match(r'<(ListOf)?(\w+)[^>]*?(/?)>', v)
    lst, name, empty = m.group(1), m.group(2), m.group(3)
    d = {'type': BUILTIN[name], 'array': 1 if lst else 0, 'len': 0,
         'ival': None, 'sval': None, 'eo': 0}
    if lst:
        inner = '' if empty else v[m.end():v.rindex('</ListOf')]
        elems = re.findall(r'<%s(?:\s[^>]*)?(?:/>|>.*?</%s>)'
                           % (name, name), inner, re.S)
        d['len'] = len(elems)
        first = elems[0] if elems else None
    else:
        first = v
    if first is None:
        return d
    if name == 'String':
        t = re.match(r'<String[^>]*?(?:/>|>(.*?)</String>)', first, re.S)
        d['sval'] = unxml(t.group(1) or '')
    elif name == 'ByteString':
        b64 = re.match(r'<ByteString[^>]*?(?:/>|>(.*?)</ByteString>)', first,
                       re.S).group(1) or ''
        d['ival'] = len(base64.b64decode(''.join(b64.split())))
    elif name == 'DateTime':
        t = re.search(r'>\s*(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z\s*<', first)
        y, mo, da, h, mi, se = (int(x) for x in t.groups())
        days = datetime.date(y, mo, da).toordinal() - \
            datetime.date(1601, 1, 1).toordinal()
        d['ival'] = ((days * 24 + h) * 3600 + mi * 60 + se) * 10 ** 7
    elif name in ('Int32', 'UInt32'):
        d['ival'] = int(re.search(r'>\s*(-?\d+)\s*<', first).group(1))
    elif name == 'Boolean':
        d['ival'] = 1 if re.search(r'>\s*(true|1)\s*<', first) else 0
    elif name == 'LocalizedText':
        t = re.search(r'<Text>(.*?)</Text>', first, re.S)
        d['sval'] = unxml(t.group(1)) if t else None
    elif name == 'ExtensionObject':
        xml_id = int(re.search(r'<Identifier>i=(\d+)</Identifier>',
                               first).group(1))
        body = re.search(r'<Body>\s*<(\w+)>', first).group(1)
        assert csv_ids[body + '_Encoding_DefaultXml'] == xml_id
        d['eo'] = csv_ids[body + '_Encoding_DefaultBinary']
        if body == 'Argument':
            d['sval'] = unxml(re.search(r'<Name>(.*?)</Name>', first).group(1))
        elif body == 'EnumValueType':
            d['ival'] = int(re.search(r'<Value>(-?\d+)</Value>',
                                      first).group(1))
        elif body == 'EUInformation':
            d['ival'] = int(re.search(r'<UnitId>(-?\d+)</UnitId>',
                                      first).group(1))
    return d


def cstr(s):
    if s is None:
        return 'NULL'
    out = ''
    for ch in s:
        if ch in '"\\?':
            out += '\\' + ch
        elif ' ' <= ch <= '~':
            out += ch
        else:
            out += ''.join('\\%03o' % b for b in ch.encode('utf-8'))
    return '"' + out + '"'


def write(schema, out, nodes, sel, nrefs):
    lic = open(os.path.join(schema, 'LICENSE-OPCFoundation-MIT-1.00.txt'),
               encoding='ascii').read().split('\n')
    start = next(i for i, l in enumerate(lic) if l.startswith('Copyright'))
    lic = [l.rstrip() for l in lic[start:]]
    while lic and not lic[-1]:
        lic.pop()
    o = ['/*',
         ' * Generated by tests/unit/broker/make_ns0_expected.py from',
         ' * Opc.Ua.NodeSet2.xml of OPC UA 1.05.03 (2023-12-15), independently',
         ' * of broker/gen/gen_ns0.py; entries were checked by hand against the',
         ' * NodeSet.  Regenerate only after a schema update, and review the diff.',
         ' *']
    o += [(' * ' + l).rstrip() for l in lic]
    o += [' */', '',
          '/*',
          ' * tests/unit/broker/ns0_expected.h: what namespace 0 must contain,',
          ' * for check_ns0.c.  One entry per selected node: NodeClass, names,',
          ' * DataType and ValueRank (0 when not a Variable/VariableType),',
          ' * IsAbstract, Symmetric, HasTypeDefinition target and supertype (0 = none),',
          ' * and the Value as a Variant: built-in type (0 = no Value), array',
          ' * flag and length, and one checkable item: ival for a Boolean,',
          ' * Int32 or UInt32 scalar, the ticks of a DateTime, the length of a',
          ' * ByteString, the first EnumValueType.Value or EUInformation.UnitId;',
          ' * sval for a String or LocalizedText (text of',
          ' * the first element of an array) and the first Argument.Name; eo =',
          ' * DefaultBinary encoding id of the first ExtensionObject.',
          ' */',
          '#ifndef NS0_EXPECTED_H',
          '#define NS0_EXPECTED_H',
          '',
          '#include <stddef.h>',
          '#include <stdint.h>',
          '',
          '#define NS0_EXP_NODES %d      /* nodes in the NodeSet */' % len(nodes),
          '#define NS0_EXP_REFS  %d     /* references, de-duplicated, x2 */'
          % nrefs,
          '',
          '/* Nodes per NodeClass. */',
          'static const struct {',
          '    uint8_t  node_class;',
          '    uint32_t count;',
          '} ns0_exp_classes[] = {']
    for c in sorted(CLASS.values()):
        o.append('    { %d, %d },' % (c, sum(1 for n in nodes.values()
                                             if n['cls'] == c)))
    o += ['};',
          '',
          'struct ns0_exp {',
          '    uint32_t    id;',
          '    uint8_t     node_class;',
          '    uint8_t     abstract;',
          '    uint8_t     symmetric;',
          '    uint8_t     vtype;        /* built-in type id, 0 = no Value */',
          '    uint8_t     is_array;',
          '    const char *browse_name;',
          '    const char *display_name;',
          '    uint32_t    data_type;',
          '    int32_t     value_rank;',
          '    uint32_t    type_def;     /* HasTypeDefinition target */',
          '    uint32_t    super;        /* source of the inverse HasSubtype */',
          '    int32_t     array_len;',
          '    uint8_t     has_ival;',
          '    int64_t     ival;',
          '    const char *sval;         /* NULL: nothing to check */',
          '    uint32_t    eo;',
          '};',
          '',
          'static const struct ns0_exp ns0_exp[] = {']
    for nid in sel:
        n = nodes[nid]
        v = n['val'] or {'type': 0, 'array': 0, 'len': 0, 'ival': None,
                         'sval': None, 'eo': 0}
        o.append('    { %d, %d, %d, %d, %d, %d, %s, %s,'
                 % (nid, n['cls'], n['abs'], n['sym'], v['type'], v['array'],
                    cstr(n['bn']), cstr(n['dn'])))
        o.append('      %d, %d, %d, %d, %d, %d, %d, %s, %d },'
                 % (n['dt'], n['vr'], n['td'], n['super'], v['len'],
                    0 if v['ival'] is None else 1, v['ival'] or 0,
                    cstr(v['sval']), v['eo']))
    o += ['};', '',
          '#define NS0_EXP_COUNT (sizeof(ns0_exp) / sizeof(ns0_exp[0]))', '',
          '#endif /* NS0_EXPECTED_H */', '']
    with open(out, 'w', encoding='ascii', newline='\n') as f:
        f.write('\n'.join(o))


if __name__ == '__main__':
    main(sys.argv)

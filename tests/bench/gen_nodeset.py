#!/usr/bin/env python3
"""tests/bench/gen_nodeset.py: write a NodeSet2 XML file of N nodes for the
import benchmark (make bench-nodeset).

    python3 tests/bench/gen_nodeset.py [N [FILE]]     (default 100000, stdout)

The model has its own namespace: one folder Objects/Bench, then groups of
one object (BaseObjectType) with 9 variables (BaseDataVariableType) of
mixed types and values -- Double, Int32, UInt16, Boolean, String,
LocalizedText, DateTime, a ListOfDouble of 8 and a ListOfString of 3 --
with string NodeIds like ns=1;s=Dev17.Temperature.  Every node has its
HasTypeDefinition and its parent reference, written at both ends as
UA ModelCompiler output does.  Exactly N nodes (N >= 1).  Standard library
only.
"""
import sys

TYPES = [
    ("Temperature", "Double", lambda i: "<uax:Double>%.3f</uax:Double>"
     % (20 + i * 0.001)),
    ("Count", "Int32", lambda i: "<uax:Int32>%d</uax:Int32>" % (i - 50000)),
    ("Mode", "UInt16", lambda i: "<uax:UInt16>%d</uax:UInt16>" % (i % 65536)),
    ("Running", "Boolean", lambda i: "<uax:Boolean>%s</uax:Boolean>"
     % ("true" if i % 2 else "false")),
    ("Tag", "String", lambda i: "<uax:String>TAG-%08d</uax:String>" % i),
    ("Label", "LocalizedText", lambda i: "<uax:LocalizedText><uax:Locale>en"
     "</uax:Locale><uax:Text>Device %d</uax:Text></uax:LocalizedText>" % i),
    ("Since", "DateTime", lambda i: "<uax:DateTime>2026-01-01T00:00:%02dZ"
     "</uax:DateTime>" % (i % 60)),
    ("Samples", "Double", lambda i: "<uax:ListOfDouble>" + "".join(
        "<uax:Double>%d.5</uax:Double>" % (i + k) for k in range(8))
     + "</uax:ListOfDouble>"),
    ("Names", "String", lambda i: "<uax:ListOfString>" + "".join(
        "<uax:String>n%d</uax:String>" % (i + k) for k in range(3))
     + "</uax:ListOfString>"),
]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    w = out.write
    w('<?xml version="1.0" encoding="utf-8"?>\n'
      '<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd"'
      ' xmlns:uax="http://opcfoundation.org/UA/2008/02/Types.xsd">\n'
      '  <NamespaceUris><Uri>http://example.com/UA/Bench/</Uri>'
      '</NamespaceUris>\n'
      '  <Aliases>\n'
      '    <Alias Alias="Boolean">i=1</Alias>\n'
      '    <Alias Alias="Int32">i=6</Alias>\n'
      '    <Alias Alias="UInt16">i=5</Alias>\n'
      '    <Alias Alias="Double">i=11</Alias>\n'
      '    <Alias Alias="String">i=12</Alias>\n'
      '    <Alias Alias="DateTime">i=13</Alias>\n'
      '    <Alias Alias="LocalizedText">i=21</Alias>\n'
      '    <Alias Alias="Organizes">i=35</Alias>\n'
      '    <Alias Alias="HasTypeDefinition">i=40</Alias>\n'
      '    <Alias Alias="HasComponent">i=47</Alias>\n'
      '  </Aliases>\n')
    made = 1
    devs = []
    groups = (n - 1 + len(TYPES)) // (len(TYPES) + 1)
    left = n - 1
    for d in range(groups):
        k = min(len(TYPES), left - 1) if left > 0 else 0
        devs.append(k)
        left -= 1 + k
    w('  <UAObject NodeId="ns=1;s=Bench" BrowseName="1:Bench">\n'
      '    <DisplayName>Bench</DisplayName>\n'
      '    <References>\n'
      '      <Reference ReferenceType="Organizes" IsForward="false">i=85'
      '</Reference>\n'
      '      <Reference ReferenceType="HasTypeDefinition">i=61</Reference>\n')
    for d in range(len(devs)):
        w('      <Reference ReferenceType="Organizes">ns=1;s=Dev%d'
          '</Reference>\n' % d)
    w('    </References>\n  </UAObject>\n')
    for d, k in enumerate(devs):
        dev = "Dev%d" % d
        w('  <UAObject NodeId="ns=1;s=%s" BrowseName="1:%s"'
          ' ParentNodeId="ns=1;s=Bench">\n'
          '    <DisplayName>%s</DisplayName>\n'
          '    <Description>Device %d of the benchmark.</Description>\n'
          '    <References>\n'
          '      <Reference ReferenceType="HasTypeDefinition">i=58'
          '</Reference>\n'
          '      <Reference ReferenceType="Organizes" IsForward="false">'
          'ns=1;s=Bench</Reference>\n' % (dev, dev, dev, d))
        for name, _, _ in TYPES[:k]:
            w('      <Reference ReferenceType="HasComponent">ns=1;s=%s.%s'
              '</Reference>\n' % (dev, name))
        w('    </References>\n  </UAObject>\n')
        made += 1
        for name, dt, val in TYPES[:k]:
            i = made
            rank = ' ValueRank="1" ArrayDimensions="0"' \
                if name in ("Samples", "Names") else ""
            w('  <UAVariable NodeId="ns=1;s=%s.%s" BrowseName="1:%s"'
              ' ParentNodeId="ns=1;s=%s" DataType="%s"%s AccessLevel="3"'
              ' UserAccessLevel="3">\n'
              '    <DisplayName>%s</DisplayName>\n'
              '    <References>\n'
              '      <Reference ReferenceType="HasTypeDefinition">i=63'
              '</Reference>\n'
              '      <Reference ReferenceType="HasComponent"'
              ' IsForward="false">ns=1;s=%s</Reference>\n'
              '    </References>\n'
              '    <Value>%s</Value>\n'
              '  </UAVariable>\n'
              % (dev, name, name, dev, dt, rank, name, dev, val(i)))
            made += 1
    w('</UANodeSet>\n')
    if made != n:
        raise SystemExit("gen_nodeset: made %d nodes, not %d" % (made, n))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()

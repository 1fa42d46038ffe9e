//! The answer set's rows of Q1 to Q10 (Q1 ... Q10 of [`super`]'s table), one row a line, `|`
//! between columns, values trimmed. Data only: see [`super`] for the source and the layout.

/// Q1: 4 rows.
pub const Q1: &str = "\
A|F|37734107.00|56586554400.73|53758257134.87|55909065222.83|25.52|38273.13|0.05|1478493\n\
N|F|991417.00|1487504710.38|1413082168.05|1469649223.19|25.52|38284.47|0.05|38854\n\
N|O|74476040.00|111701729697.74|106118230307.61|110367043872.50|25.50|38249.12|0.05|2920374\n\
R|F|37719753.00|56568041380.90|53741292684.60|55889619119.83|25.51|38250.85|0.05|1478870\n";

/// Q2: 100 rows.
pub const Q2: &str = "\
9938.53|Supplier#000005359|UNITED KINGDOM|185358|Manufacturer#4|QKuHYh,vZGiwu2FWEJoLDx04|33-429-790-6131|uriously regular requests hag\n\
9937.84|Supplier#000005969|ROMANIA|108438|Manufacturer#1|ANDENSOSmk,miq23Xfb5RWt6dvUcvt6Qa|29-520-692-3537|efully express instructions. regular requests against the slyly fin\n\
9936.22|Supplier#000005250|UNITED KINGDOM|249|Manufacturer#4|B3rqp0xbSEim4Mpy2RH J|33-320-228-2957|etect about the furiously final accounts. slyly ironic pinto beans sleep inside the furiously\n\
9923.77|Supplier#000002324|GERMANY|29821|Manufacturer#4|y3OD9UywSTOk|17-779-299-1839|ackages boost blithely. blithely regular deposits c\n\
9871.22|Supplier#000006373|GERMANY|43868|Manufacturer#5|J8fcXWsTqM|17-813-485-8637|etect blithely bold asymptotes. fluffily ironic platelets wake furiously; blit\n\
9870.78|Supplier#000001286|GERMANY|81285|Manufacturer#2|YKA,E2fjiVd7eUrzp2Ef8j1QxGo2DFnosaTEH|17-516-924-4574|regular accounts. furiously unusual courts above the fi\n\
9870.78|Supplier#000001286|GERMANY|181285|Manufacturer#4|YKA,E2fjiVd7eUrzp2Ef8j1QxGo2DFnosaTEH|17-516-924-4574|regular accounts. furiously unusual courts above the fi\n\
9852.52|Supplier#000008973|RUSSIA|18972|Manufacturer#2|t5L67YdBYYH6o,Vz24jpDyQ9|32-188-594-7038|rns wake final foxes. carefully unusual depende\n\
9847.83|Supplier#000008097|RUSSIA|130557|Manufacturer#2|xMe97bpE69NzdwLoX|32-375-640-3593|the special excuses. silent sentiments serve carefully final ac\n\
9847.57|Supplier#000006345|FRANCE|86344|Manufacturer#1|VSt3rzk3qG698u6ld8HhOByvrTcSTSvQlDQDag|16-886-766-7945|ges. slyly regular requests are. ruthless, express excuses cajole blithely across the unu\n\
9847.57|Supplier#000006345|FRANCE|173827|Manufacturer#2|VSt3rzk3qG698u6ld8HhOByvrTcSTSvQlDQDag|16-886-766-7945|ges. slyly regular requests are. ruthless, express excuses cajole blithely across the unu\n\
9836.93|Supplier#000007342|RUSSIA|4841|Manufacturer#4|JOlK7C1,7xrEZSSOw|32-399-414-5385|blithely carefully bold theodolites. fur\n\
9817.10|Supplier#000002352|RUSSIA|124815|Manufacturer#2|4LfoHUZjgjEbAKw TgdKcgOc4D4uCYw|32-551-831-1437|wake carefully alongside of the carefully final ex\n\
9817.10|Supplier#000002352|RUSSIA|152351|Manufacturer#3|4LfoHUZjgjEbAKw TgdKcgOc4D4uCYw|32-551-831-1437|wake carefully alongside of the carefully final ex\n\
9739.86|Supplier#000003384|FRANCE|138357|Manufacturer#2|o,Z3v4POifevE k9U1b 6J1ucX,I|16-494-913-5925|s after the furiously bold packages sleep fluffily idly final requests: quickly final\n\
9721.95|Supplier#000008757|UNITED KINGDOM|156241|Manufacturer#3|Atg6GnM4dT2|33-821-407-2995|eep furiously sauternes; quickl\n\
9681.33|Supplier#000008406|RUSSIA|78405|Manufacturer#1|,qUuXcftUl|32-139-873-8571|haggle slyly regular excuses. quic\n\
9643.55|Supplier#000005148|ROMANIA|107617|Manufacturer#1|kT4ciVFslx9z4s79p Js825|29-252-617-4850|final excuses. final ideas boost quickly furiously speci\n\
9624.82|Supplier#000001816|FRANCE|34306|Manufacturer#3|e7vab91vLJPWxxZnewmnDBpDmxYHrb|16-392-237-6726|e packages are around the special ideas. special, pending foxes us\n\
9624.78|Supplier#000009658|ROMANIA|189657|Manufacturer#1|oE9uBgEfSS4opIcepXyAYM,x|29-748-876-2014|ronic asymptotes wake bravely final\n\
9612.94|Supplier#000003228|ROMANIA|120715|Manufacturer#2|KDdpNKN3cWu7ZSrbdqp7AfSLxx,qWB|29-325-784-8187|warhorses. quickly even deposits sublate daringly ironic instructions. slyly blithe t\n\
9612.94|Supplier#000003228|ROMANIA|198189|Manufacturer#4|KDdpNKN3cWu7ZSrbdqp7AfSLxx,qWB|29-325-784-8187|warhorses. quickly even deposits sublate daringly ironic instructions. slyly blithe t\n\
9571.83|Supplier#000004305|ROMANIA|179270|Manufacturer#2|qNHZ7WmCzygwMPRDO9Ps|29-973-481-1831|kly carefully express asymptotes. furiou\n\
9558.10|Supplier#000003532|UNITED KINGDOM|88515|Manufacturer#4|EOeuiiOn21OVpTlGguufFDFsbN1p0lhpxHp|33-152-301-2164|foxes. quickly even excuses use. slyly special foxes nag bl\n\
9492.79|Supplier#000005975|GERMANY|25974|Manufacturer#5|S6mIiCTx82z7lV|17-992-579-4839|arefully pending accounts. blithely regular excuses boost carefully carefully ironic p\n\
9461.05|Supplier#000002536|UNITED KINGDOM|20033|Manufacturer#1|8mmGbyzaU 7ZS2wJumTibypncu9pNkDc4FYA|33-556-973-5522|. slyly regular deposits wake slyly. furiously regular warthogs are.\n\
9453.01|Supplier#000000802|ROMANIA|175767|Manufacturer#1|,6HYXb4uaHITmtMBj4Ak57Pd|29-342-882-6463|gular frets. permanently special multipliers believe blithely alongs\n\
9408.65|Supplier#000007772|UNITED KINGDOM|117771|Manufacturer#4|AiC5YAH,gdu0i7|33-152-491-1126|nag against the final requests. furiously unusual packages cajole blit\n\
9359.61|Supplier#000004856|ROMANIA|62349|Manufacturer#5|HYogcF3Jb yh1|29-334-870-9731|y ironic theodolites. blithely sile\n\
9357.45|Supplier#000006188|UNITED KINGDOM|138648|Manufacturer#1|g801,ssP8wpTk4Hm|33-583-607-1633|ously always regular packages. fluffily even accounts beneath the furiously final pack\n\
9352.04|Supplier#000003439|GERMANY|170921|Manufacturer#4|qYPDgoiBGhCYxjgC|17-128-996-4650|according to the carefully bold ideas\n\
9312.97|Supplier#000007807|RUSSIA|90279|Manufacturer#5|oGYMPCk9XHGB2PBfKRnHA|32-673-872-5854|ecial packages among the pending, even requests use regula\n\
9312.97|Supplier#000007807|RUSSIA|100276|Manufacturer#5|oGYMPCk9XHGB2PBfKRnHA|32-673-872-5854|ecial packages among the pending, even requests use regula\n\
9280.27|Supplier#000007194|ROMANIA|47193|Manufacturer#3|zhRUQkBSrFYxIAXTfInj vyGRQjeK|29-318-454-2133|o beans haggle after the furiously unusual deposits. carefully silent dolphins cajole carefully\n\
9274.80|Supplier#000008854|RUSSIA|76346|Manufacturer#3|1xhLoOUM7I3mZ1mKnerw OSqdbb4QbGa|32-524-148-5221|y. courts do wake slyly. carefully ironic platelets haggle above the slyly regular the\n\
9249.35|Supplier#000003973|FRANCE|26466|Manufacturer#1|d18GiDsL6Wm2IsGXM,RZf1jCsgZAOjNYVThTRP4|16-722-866-1658|uests are furiously. regular tithes through the regular, final accounts cajole furiously above the q\n\
9249.35|Supplier#000003973|FRANCE|33972|Manufacturer#1|d18GiDsL6Wm2IsGXM,RZf1jCsgZAOjNYVThTRP4|16-722-866-1658|uests are furiously. regular tithes through the regular, final accounts cajole furiously above the q\n\
9208.70|Supplier#000007769|ROMANIA|40256|Manufacturer#5|rsimdze 5o9P Ht7xS|29-964-424-9649|lites was quickly above the furiously ironic requests. slyly even foxes against the blithely bold\n\
9201.47|Supplier#000009690|UNITED KINGDOM|67183|Manufacturer#5|CB BnUTlmi5zdeEl7R7|33-121-267-9529|e even, even foxes. blithely ironic packages cajole regular packages. slyly final ide\n\
9192.10|Supplier#000000115|UNITED KINGDOM|85098|Manufacturer#3|nJ 2t0f7Ve,wL1,6WzGBJLNBUCKlsV|33-597-248-1220|es across the carefully express accounts boost caref\n\
9189.98|Supplier#000001226|GERMANY|21225|Manufacturer#4|qsLCqSvLyZfuXIpjz|17-725-903-1381|deposits. blithely bold excuses about the slyly bold forges wake\n\
9128.97|Supplier#000004311|RUSSIA|146768|Manufacturer#5|I8IjnXd7NSJRs594RxsRR0|32-155-440-7120|refully. blithely unusual asymptotes haggle\n\
9104.83|Supplier#000008520|GERMANY|150974|Manufacturer#4|RqRVDgD0ER J9 b41vR2,3|17-728-804-1793|ly about the blithely ironic depths. slyly final theodolites among the fluffily bold ideas print\n\
9101.00|Supplier#000005791|ROMANIA|128254|Manufacturer#5|zub2zCV,jhHPPQqi,P2INAjE1zI n66cOEoXFG|29-549-251-5384|ts. notornis detect blithely above the carefully bold requests. blithely even package\n\
9094.57|Supplier#000004582|RUSSIA|39575|Manufacturer#1|WB0XkCSG3r,mnQ n,h9VIxjjr9ARHFvKgMDf|32-587-577-1351|jole. regular accounts sleep blithely frets. final pinto beans play furiously past the\n\
8996.87|Supplier#000004702|FRANCE|102191|Manufacturer#5|8XVcQK23akp|16-811-269-8946|ickly final packages along the express plat\n\
8996.14|Supplier#000009814|ROMANIA|139813|Manufacturer#2|af0O5pg83lPU4IDVmEylXZVqYZQzSDlYLAmR|29-995-571-8781|dependencies boost quickly across the furiously pending requests! unusual dolphins play sl\n\
8968.42|Supplier#000010000|ROMANIA|119999|Manufacturer#5|aTGLEusCiL4F PDBdv665XBJhPyCOB0i|29-578-432-2146|ly regular foxes boost slyly. quickly special waters boost carefully ironi\n\
8936.82|Supplier#000007043|UNITED KINGDOM|109512|Manufacturer#1|FVajceZInZdbJE6Z9XsRUxrUEpiwHDrOXi,1Rz|33-784-177-8208|efully regular courts. furiousl\n\
8929.42|Supplier#000008770|FRANCE|173735|Manufacturer#4|R7cG26TtXrHAP9 HckhfRi|16-242-746-9248|cajole furiously unusual requests. quickly stealthy requests are.\n\
8920.59|Supplier#000003967|ROMANIA|26460|Manufacturer#1|eHoAXe62SY9|29-194-731-3944|aters. express, pending instructions sleep. brave, r\n\
8920.59|Supplier#000003967|ROMANIA|173966|Manufacturer#2|eHoAXe62SY9|29-194-731-3944|aters. express, pending instructions sleep. brave, r\n\
8913.96|Supplier#000004603|UNITED KINGDOM|137063|Manufacturer#2|OUzlvMUr7n,utLxmPNeYKSf3T24OXskxB5|33-789-255-7342|haggle slyly above the furiously regular pinto beans. even\n\
8877.82|Supplier#000007967|FRANCE|167966|Manufacturer#5|A3pi1BARM4nx6R,qrwFoRPU|16-442-147-9345|ously foxes. express, ironic requests im\n\
8862.24|Supplier#000003323|ROMANIA|73322|Manufacturer#3|W9 lYcsC9FwBqk3ItL|29-736-951-3710|ly pending ideas sleep about the furiously unu\n\
8841.59|Supplier#000005750|ROMANIA|100729|Manufacturer#5|Erx3lAgu0g62iaHF9x50uMH4EgeN9hEG|29-344-502-5481|gainst the pinto beans. fluffily unusual dependencies affix slyly even deposits.\n\
8781.71|Supplier#000003121|ROMANIA|13120|Manufacturer#5|wNqTogx238ZYCamFb,50v,bj 4IbNFW9Bvw1xP|29-707-291-5144|s wake quickly ironic ideas\n\
8754.24|Supplier#000009407|UNITED KINGDOM|179406|Manufacturer#4|CHRCbkaWcf5B|33-903-970-9604|e ironic requests. carefully even foxes above the furious\n\
8691.06|Supplier#000004429|UNITED KINGDOM|126892|Manufacturer#2|k,BQms5UhoAF1B2Asi,fLib|33-964-337-5038|efully express deposits kindle after the deposits. final\n\
8655.99|Supplier#000006330|RUSSIA|193810|Manufacturer#2|UozlaENr0ytKe2w6CeIEWFWn iO3S8Rae7Ou|32-561-198-3705|symptotes use about the express dolphins. requests use after the express platelets. final, ex\n\
8638.36|Supplier#000002920|RUSSIA|75398|Manufacturer#1|Je2a8bszf3L|32-122-621-7549|ly quickly ironic requests. even requests whithout t\n\
8638.36|Supplier#000002920|RUSSIA|170402|Manufacturer#3|Je2a8bszf3L|32-122-621-7549|ly quickly ironic requests. even requests whithout t\n\
8607.69|Supplier#000006003|UNITED KINGDOM|76002|Manufacturer#2|EH9wADcEiuenM0NR08zDwMidw,52Y2RyILEiA|33-416-807-5206|ar, pending accounts. pending depende\n\
8569.52|Supplier#000005936|RUSSIA|5935|Manufacturer#5|jXaNZ6vwnEWJ2ksLZJpjtgt0bY2a3AU|32-644-251-7916|. regular foxes nag carefully atop the regular, silent deposits. quickly regular packages\n\
8564.12|Supplier#000000033|GERMANY|110032|Manufacturer#1|gfeKpYw3400L0SDywXA6Ya1Qmq1w6YB9f3R|17-138-897-9374|n sauternes along the regular asymptotes are regularly along the\n\
8553.82|Supplier#000003979|ROMANIA|143978|Manufacturer#4|BfmVhCAnCMY3jzpjUMy4CNWs9 HzpdQR7INJU|29-124-646-4897|ic requests wake against the blithely unusual accounts. fluffily r\n\
8517.23|Supplier#000009529|RUSSIA|37025|Manufacturer#5|e44R8o7JAIS9iMcr|32-565-297-8775|ove the even courts. furiously special platelets\n\
8517.23|Supplier#000009529|RUSSIA|59528|Manufacturer#2|e44R8o7JAIS9iMcr|32-565-297-8775|ove the even courts. furiously special platelets\n\
8503.70|Supplier#000006830|RUSSIA|44325|Manufacturer#4|BC4WFCYRUZyaIgchU 4S|32-147-878-5069|pades cajole. furious packages among the carefully express excuses boost furiously across th\n\
8457.09|Supplier#000009456|UNITED KINGDOM|19455|Manufacturer#1|7SBhZs8gP1cJjT0Qf433YBk|33-858-440-4349|cing requests along the furiously unusual deposits promise among the furiously unus\n\
8441.40|Supplier#000003817|FRANCE|141302|Manufacturer#2|hU3fz3xL78|16-339-356-5115|ely even ideas. ideas wake slyly furiously unusual instructions. pinto beans sleep ag\n\
8432.89|Supplier#000003990|RUSSIA|191470|Manufacturer#1|wehBBp1RQbfxAYDASS75MsywmsKHRVdkrvNe6m|32-839-509-9301|ep furiously. packages should have to haggle slyly across the deposits. furiously regu\n\
8431.40|Supplier#000002675|ROMANIA|5174|Manufacturer#1|HJFStOu9R5NGPOegKhgbzBdyvrG2yh8w|29-474-643-1443|ithely express pinto beans. blithely even foxes haggle. furiously regular theodol\n\
8407.04|Supplier#000005406|RUSSIA|162889|Manufacturer#4|j7 gYF5RW8DC5UrjKC|32-626-152-4621|r the blithely regular packages. slyly ironic theodoli\n\
8386.08|Supplier#000008518|FRANCE|36014|Manufacturer#3|2jqzqqAVe9crMVGP,n9nTsQXulNLTUYoJjEDcqWV|16-618-780-7481|blithely bold pains are carefully platelets. finally regular pinto beans sleep carefully special\n\
8376.52|Supplier#000005306|UNITED KINGDOM|190267|Manufacturer#5|9t8Y8 QqSIsoADPt6NLdk,TP5zyRx41oBUlgoGc9|33-632-514-7931|ly final accounts sleep special, regular requests. furiously regular\n\
8348.74|Supplier#000008851|FRANCE|66344|Manufacturer#4|nWxi7GwEbjhw1|16-796-240-2472|boldly final deposits. regular, even instructions detect slyly. fluffily unusual pinto bea\n\
8338.58|Supplier#000007269|FRANCE|17268|Manufacturer#4|ZwhJSwABUoiB04,3|16-267-277-4365|iously final accounts. even pinto beans cajole slyly regular\n\
8328.46|Supplier#000001744|ROMANIA|69237|Manufacturer#5|oLo3fV64q2,FKHa3p,qHnS7Yzv,ps8|29-330-728-5873|ep carefully-- even, careful packages are slyly along t\n\
8307.93|Supplier#000003142|GERMANY|18139|Manufacturer#1|dqblvV8dCNAorGlJ|17-595-447-6026|olites wake furiously regular decoys. final requests nod\n\
8231.61|Supplier#000009558|RUSSIA|192000|Manufacturer#2|mcdgen,yT1iJDHDS5fV|32-762-137-5858|foxes according to the furi\n\
8152.61|Supplier#000002731|ROMANIA|15227|Manufacturer#4|nluXJCuY1tu|29-805-463-2030|special requests. even, regular warhorses affix among the final gr\n\
8109.09|Supplier#000009186|FRANCE|99185|Manufacturer#1|wgfosrVPexl9pEXWywaqlBMDYYf|16-668-570-1402|tions haggle slyly about the sil\n\
8102.62|Supplier#000003347|UNITED KINGDOM|18344|Manufacturer#5|m CtXS2S16i|33-454-274-8532|egrate with the slyly bold instructions. special foxes haggle silently among the\n\
8046.07|Supplier#000008780|FRANCE|191222|Manufacturer#3|AczzuE0UK9osj ,Lx0Jmh|16-473-215-6395|onic platelets cajole after the regular instructions. permanently bold excuses\n\
8042.09|Supplier#000003245|RUSSIA|135705|Manufacturer#4|Dh8Ikg39onrbOL4DyTfGw8a9oKUX3d9Y|32-836-132-8872|osits. packages cajole slyly. furiously regular deposits cajole slyly. q\n\
8042.09|Supplier#000003245|RUSSIA|150729|Manufacturer#1|Dh8Ikg39onrbOL4DyTfGw8a9oKUX3d9Y|32-836-132-8872|osits. packages cajole slyly. furiously regular deposits cajole slyly. q\n\
7992.40|Supplier#000006108|FRANCE|118574|Manufacturer#1|8tBydnTDwUqfBfFV4l3|16-974-998-8937|ironic ideas? fluffily even instructions wake. blithel\n\
7980.65|Supplier#000001288|FRANCE|13784|Manufacturer#4|zE,7HgVPrCn|16-646-464-8247|ully bold courts. escapades nag slyly. furiously fluffy theodo\n\
7950.37|Supplier#000008101|GERMANY|33094|Manufacturer#5|kkYvL6IuvojJgTNG IKkaXQDYgx8ILohj|17-627-663-8014|arefully unusual requests x-ray above the quickly final deposits.\n\
7937.93|Supplier#000009012|ROMANIA|83995|Manufacturer#2|iUiTziH,Ek3i4lwSgunXMgrcTzwdb|29-250-925-9690|to the blithely ironic deposits nag sly\n\
7914.45|Supplier#000001013|RUSSIA|125988|Manufacturer#2|riRcntps4KEDtYScjpMIWeYF6mNnR|32-194-698-3365|busily bold packages are dolphi\n\
7912.91|Supplier#000004211|GERMANY|159180|Manufacturer#5|2wQRVovHrm3,v03IKzfTd,1PYsFXQFFOG|17-266-947-7315|ay furiously regular platelets. cou\n\
7912.91|Supplier#000004211|GERMANY|184210|Manufacturer#4|2wQRVovHrm3,v03IKzfTd,1PYsFXQFFOG|17-266-947-7315|ay furiously regular platelets. cou\n\
7894.56|Supplier#000007981|GERMANY|85472|Manufacturer#4|NSJ96vMROAbeXP|17-963-404-3760|ic platelets affix after the furiously\n\
7887.08|Supplier#000009792|GERMANY|164759|Manufacturer#3|Y28ITVeYriT3kIGdV2K8fSZ V2UqT5H1Otz|17-988-938-4296|ckly around the carefully fluffy theodolites. slyly ironic pack\n\
7871.50|Supplier#000007206|RUSSIA|104695|Manufacturer#1|3w fNCnrVmvJjE95sgWZzvW|32-432-452-7731|ironic requests. furiously final theodolites cajole. final, express packages sleep. quickly reg\n\
7852.45|Supplier#000005864|RUSSIA|8363|Manufacturer#4|WCNfBPZeSXh3h,c|32-454-883-3821|usly unusual pinto beans. brave ideas sleep carefully quickly ironi\n\
7850.66|Supplier#000001518|UNITED KINGDOM|86501|Manufacturer#1|ONda3YJiHKJOC|33-730-383-3892|ifts haggle fluffily pending pai\n\
7843.52|Supplier#000006683|FRANCE|11680|Manufacturer#4|2Z0JGkiv01Y00oCFwUGfviIbhzCdy|16-464-517-8943|express, final pinto beans x-ray slyly asymptotes. unusual, unusual\n";

/// Q3: 10 rows.
pub const Q3: &str = "\
2456423|406181.01|1995-03-05|0\n\
3459808|405838.70|1995-03-04|0\n\
492164|390324.06|1995-02-19|0\n\
1188320|384537.94|1995-03-09|0\n\
2435712|378673.06|1995-02-26|0\n\
4878020|378376.80|1995-03-12|0\n\
5521732|375153.92|1995-03-13|0\n\
2628192|373133.31|1995-02-22|0\n\
993600|371407.46|1995-03-05|0\n\
2300070|367371.15|1995-03-13|0\n";

/// Q4: 5 rows.
pub const Q4: &str = "\
1-URGENT|10594\n\
2-HIGH|10476\n\
3-MEDIUM|10410\n\
4-NOT SPECIFIED|10556\n\
5-LOW|10487\n";

/// Q5: 5 rows.
pub const Q5: &str = "\
INDONESIA|55502041.17\n\
VIETNAM|55295087.00\n\
CHINA|53724494.26\n\
INDIA|52035512.00\n\
JAPAN|45410175.70\n";

/// Q6: 1 rows.
pub const Q6: &str = "\
123141078.23\n";

/// Q7: 4 rows.
pub const Q7: &str = "\
FRANCE|GERMANY|1995|54639732.73\n\
FRANCE|GERMANY|1996|54633083.31\n\
GERMANY|FRANCE|1995|52531746.67\n\
GERMANY|FRANCE|1996|52520549.02\n";

/// Q8: 2 rows.
pub const Q8: &str = "\
1995|0.03\n\
1996|0.04\n";

/// Q9: 175 rows.
pub const Q9: &str = "\
ALGERIA|1998|27136900.18\n\
ALGERIA|1997|48611833.50\n\
ALGERIA|1996|48285482.68\n\
ALGERIA|1995|44402273.60\n\
ALGERIA|1994|48694008.07\n\
ALGERIA|1993|46044207.78\n\
ALGERIA|1992|45636849.49\n\
ARGENTINA|1998|28341663.78\n\
ARGENTINA|1997|47143964.12\n\
ARGENTINA|1996|45255278.60\n\
ARGENTINA|1995|45631769.21\n\
ARGENTINA|1994|48268856.35\n\
ARGENTINA|1993|48605593.62\n\
ARGENTINA|1992|46654240.75\n\
BRAZIL|1998|26527736.40\n\
BRAZIL|1997|45640660.77\n\
BRAZIL|1996|45090647.16\n\
BRAZIL|1995|44015888.51\n\
BRAZIL|1994|44854218.89\n\
BRAZIL|1993|45766603.74\n\
BRAZIL|1992|45280216.80\n\
CANADA|1998|26828985.39\n\
CANADA|1997|44849954.32\n\
CANADA|1996|46307936.11\n\
CANADA|1995|47311993.04\n\
CANADA|1994|46691491.96\n\
CANADA|1993|46634791.11\n\
CANADA|1992|45873849.69\n\
CHINA|1998|27510180.17\n\
CHINA|1997|46123865.41\n\
CHINA|1996|49532807.06\n\
CHINA|1995|46734651.48\n\
CHINA|1994|46397896.61\n\
CHINA|1993|49634673.95\n\
CHINA|1992|46949457.64\n\
EGYPT|1998|28401491.80\n\
EGYPT|1997|47674857.68\n\
EGYPT|1996|47745727.55\n\
EGYPT|1995|45897160.68\n\
EGYPT|1994|47194895.23\n\
EGYPT|1993|49133627.65\n\
EGYPT|1992|47000574.50\n\
ETHIOPIA|1998|25135046.14\n\
ETHIOPIA|1997|43010596.08\n\
ETHIOPIA|1996|43636287.19\n\
ETHIOPIA|1995|43575757.33\n\
ETHIOPIA|1994|41597208.53\n\
ETHIOPIA|1993|42622804.16\n\
ETHIOPIA|1992|44385735.68\n\
FRANCE|1998|26210392.28\n\
FRANCE|1997|42392969.47\n\
FRANCE|1996|43306317.97\n\
FRANCE|1995|46377408.43\n\
FRANCE|1994|43447352.99\n\
FRANCE|1993|43729961.06\n\
FRANCE|1992|44052308.43\n\
GERMANY|1998|25991257.11\n\
GERMANY|1997|43968355.81\n\
GERMANY|1996|45882074.80\n\
GERMANY|1995|43314338.31\n\
GERMANY|1994|44616995.44\n\
GERMANY|1993|45126645.91\n\
GERMANY|1992|44361141.21\n\
INDIA|1998|29626417.24\n\
INDIA|1997|51386111.34\n\
INDIA|1996|47571018.51\n\
INDIA|1995|49344062.28\n\
INDIA|1994|50106952.43\n\
INDIA|1993|48112766.70\n\
INDIA|1992|47914303.12\n\
INDONESIA|1998|27734909.68\n\
INDONESIA|1997|44593812.99\n\
INDONESIA|1996|44746729.81\n\
INDONESIA|1995|45593622.70\n\
INDONESIA|1994|45988483.88\n\
INDONESIA|1993|46147963.79\n\
INDONESIA|1992|45185777.07\n\
IRAN|1998|26661608.93\n\
IRAN|1997|45019114.17\n\
IRAN|1996|45891397.10\n\
IRAN|1995|44414285.23\n\
IRAN|1994|43696360.48\n\
IRAN|1993|45362775.81\n\
IRAN|1992|43052338.41\n\
IRAQ|1998|31188498.19\n\
IRAQ|1997|48585307.52\n\
IRAQ|1996|50036593.84\n\
IRAQ|1995|48774801.73\n\
IRAQ|1994|48795847.23\n\
IRAQ|1993|47435691.51\n\
IRAQ|1992|47562355.66\n\
JAPAN|1998|24694102.17\n\
JAPAN|1997|42377052.35\n\
JAPAN|1996|40267778.91\n\
JAPAN|1995|40925317.47\n\
JAPAN|1994|41159518.31\n\
JAPAN|1993|39589074.28\n\
JAPAN|1992|39113493.91\n\
JORDAN|1998|23489867.79\n\
JORDAN|1997|41615962.66\n\
JORDAN|1996|41860855.47\n\
JORDAN|1995|39931672.09\n\
JORDAN|1994|40707555.46\n\
JORDAN|1993|39060405.47\n\
JORDAN|1992|41657604.27\n\
KENYA|1998|25566337.43\n\
KENYA|1997|43108847.90\n\
KENYA|1996|43482953.54\n\
KENYA|1995|42517988.98\n\
KENYA|1994|43612479.45\n\
KENYA|1993|42724038.76\n\
KENYA|1992|43217106.21\n\
MOROCCO|1998|24915496.88\n\
MOROCCO|1997|42698382.85\n\
MOROCCO|1996|42986113.50\n\
MOROCCO|1995|42316089.16\n\
MOROCCO|1994|43458604.60\n\
MOROCCO|1993|42672288.07\n\
MOROCCO|1992|42800781.64\n\
MOZAMBIQUE|1998|28279876.03\n\
MOZAMBIQUE|1997|51159216.23\n\
MOZAMBIQUE|1996|48072525.06\n\
MOZAMBIQUE|1995|48905200.60\n\
MOZAMBIQUE|1994|46092076.28\n\
MOZAMBIQUE|1993|48555926.27\n\
MOZAMBIQUE|1992|47809075.12\n\
PERU|1998|26713966.27\n\
PERU|1997|48324008.60\n\
PERU|1996|50310008.86\n\
PERU|1995|49647080.96\n\
PERU|1994|46420910.28\n\
PERU|1993|51536906.25\n\
PERU|1992|47711665.31\n\
ROMANIA|1998|27271993.10\n\
ROMANIA|1997|45063059.20\n\
ROMANIA|1996|47492335.03\n\
ROMANIA|1995|45710636.29\n\
ROMANIA|1994|46088041.11\n\
ROMANIA|1993|47515092.56\n\
ROMANIA|1992|44111439.80\n\
RUSSIA|1998|27935323.73\n\
RUSSIA|1997|48222347.29\n\
RUSSIA|1996|47553559.49\n\
RUSSIA|1995|46755990.10\n\
RUSSIA|1994|48000515.62\n\
RUSSIA|1993|48569624.51\n\
RUSSIA|1992|47672831.53\n\
SAUDI ARABIA|1998|27113516.84\n\
SAUDI ARABIA|1997|46690468.96\n\
SAUDI ARABIA|1996|47775782.67\n\
SAUDI ARABIA|1995|46657107.83\n\
SAUDI ARABIA|1994|48181672.81\n\
SAUDI ARABIA|1993|45692556.44\n\
SAUDI ARABIA|1992|48924913.27\n\
UNITED KINGDOM|1998|26366682.88\n\
UNITED KINGDOM|1997|44518130.19\n\
UNITED KINGDOM|1996|45539729.62\n\
UNITED KINGDOM|1995|46845879.34\n\
UNITED KINGDOM|1994|43081609.57\n\
UNITED KINGDOM|1993|44770146.76\n\
UNITED KINGDOM|1992|44123402.55\n\
UNITED STATES|1998|27826593.68\n\
UNITED STATES|1997|46638572.36\n\
UNITED STATES|1996|46688280.55\n\
UNITED STATES|1995|48951591.62\n\
UNITED STATES|1994|45099092.06\n\
UNITED STATES|1993|46181600.53\n\
UNITED STATES|1992|46168214.09\n\
VIETNAM|1998|27281931.00\n\
VIETNAM|1997|48735914.18\n\
VIETNAM|1996|47824595.90\n\
VIETNAM|1995|48235135.80\n\
VIETNAM|1994|47729256.33\n\
VIETNAM|1993|45352676.87\n\
VIETNAM|1992|47846355.65\n";

/// Q10: 20 rows.
pub const Q10: &str = "\
57040|Customer#000057040|734235.25|632.87|JAPAN|Eioyzjf4pp|22-895-641-3466|sits. slyly regular requests sleep alongside of the regular inst\n\
143347|Customer#000143347|721002.69|2557.47|EGYPT|1aReFYv,Kw4|14-742-935-3718|ggle carefully enticing requests. final deposits use bold, bold pinto beans. ironic, idle re\n\
60838|Customer#000060838|679127.31|2454.77|BRAZIL|64EaJ5vMAHWJlBOxJklpNc2RJiWE|12-913-494-9813|need to boost against the slyly regular account\n\
101998|Customer#000101998|637029.57|3790.89|UNITED KINGDOM|01c9CILnNtfOQYmZj|33-593-865-6378|ress foxes wake slyly after the bold excuses. ironic platelets are furiously carefully bold theodolites\n\
125341|Customer#000125341|633508.09|4983.51|GERMANY|S29ODD6bceU8QSuuEJznkNaK|17-582-695-5962|arefully even depths. blithely even excuses sleep furiously. foxes use except the dependencies. ca\n\
25501|Customer#000025501|620269.78|7725.04|ETHIOPIA|W556MXuoiaYCCZamJI,Rn0B4ACUGdkQ8DZ|15-874-808-6793|he pending instructions wake carefully at the pinto beans. regular, final instructions along the slyly fina\n\
115831|Customer#000115831|596423.87|5098.10|FRANCE|rFeBbEEyk dl ne7zV5fDrmiq1oK09wV7pxqCgIc|16-715-386-3788|l somas sleep. furiously final deposits wake blithely regular pinto b\n\
84223|Customer#000084223|594998.02|528.65|UNITED KINGDOM|nAVZCs6BaWap rrM27N 2qBnzc5WBauxbA|33-442-824-8191|slyly final deposits haggle regular, pending dependencies. pending escapades wake\n\
54289|Customer#000054289|585603.39|5583.02|IRAN|vXCxoCsU0Bad5JQI ,oobkZ|20-834-292-4707|ely special foxes are quickly finally ironic p\n\
39922|Customer#000039922|584878.11|7321.11|GERMANY|Zgy4s50l2GKN4pLDPBU8m342gIw6R|17-147-757-8036|y final requests. furiously final foxes cajole blithely special platelets. f\n\
6226|Customer#000006226|576783.76|2230.09|UNITED KINGDOM|8gPu8,NPGkfyQQ0hcIYUGPIBWc,ybP5g,|33-657-701-3391|ending platelets along the express deposits cajole carefully final\n\
922|Customer#000000922|576767.53|3869.25|GERMANY|Az9RFaut7NkPnc5zSD2PwHgVwr4jRzq|17-945-916-9648|luffily fluffy deposits. packages c\n\
147946|Customer#000147946|576455.13|2030.13|ALGERIA|iANyZHjqhyy7Ajah0pTrYyhJ|10-886-956-3143|ithely ironic deposits haggle blithely ironic requests. quickly regu\n\
115640|Customer#000115640|569341.19|6436.10|ARGENTINA|Vtgfia9qI 7EpHgecU1X|11-411-543-4901|ost slyly along the patterns; pinto be\n\
73606|Customer#000073606|568656.86|1785.67|JAPAN|xuR0Tro5yChDfOCrjkd2ol|22-437-653-6966|he furiously regular ideas. slowly\n\
110246|Customer#000110246|566842.98|7763.35|VIETNAM|7KzflgX MDOq7sOkI|31-943-426-9837|egular deposits serve blithely above the fl\n\
142549|Customer#000142549|563537.24|5085.99|INDONESIA|ChqEoK43OysjdHbtKCp6dKqjNyvvi9|19-955-562-2398|sleep pending courts. ironic deposits against the carefully unusual platelets cajole carefully express accounts.\n\
146149|Customer#000146149|557254.99|1791.55|ROMANIA|s87fvzFQpU|29-744-164-6487|of the slyly silent accounts. quickly final accounts across the\n\
52528|Customer#000052528|556397.35|551.79|ARGENTINA|NFztyTOR10UOJ|11-208-192-3205|deposits hinder. blithely pending asymptotes breach slyly regular re\n\
23431|Customer#000023431|554269.54|3381.86|ROMANIA|HgiV0phqhaIa9aydNoIlb|29-915-458-2654|nusual, even instructions: furiously stealthy n\n";

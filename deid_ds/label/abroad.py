"""Places abroad: the countries and regions a place cue may announce, and the cities of the foreign postcodes.

guidelines: a foreign city is ``VILLE`` (a birthplace abroad, a former address); the country is not
annotated; ``ZIP`` is the postal code. Words only, folded (lower case, no accents), for the address
rules (:mod:`deid_ds.label.addresses`) and the postcode patterns (:mod:`deid_ds.label.zips`).
"""

from __future__ import annotations

#: Countries and regions (folded), which a place cue also announces (``né au Maroc``, ``originaire de
#: Bretagne``) and which are not annotated (guidelines: a country is not annotated). City-states that are
#: also cities (Monaco, Luxembourg, Singapour, Djibouti) are left out.
COUNTRIES_AND_REGIONS = frozenset(
    """afghanistan afrique albanie algerie allemagne amerique andorre angleterre angola antilles arabie argentine
    armenie asie australie autriche azerbaidjan belgique benin bielorussie birmanie bolivie bosnie bresil bulgarie
    burkina burundi cambodge cameroun canada centrafrique chili chine chypre colombie comores congo coree
    croatie cuba danemark ecosse egypte equateur erythree espagne estonie etats-unis ethiopie europe finlande
    gabon gambie georgie ghana grece guadeloupe guatemala guinee guyane haiti hollande hongrie inde indonesie
    irak iran irlande islande israel italie jamaique japon jordanie kabylie kazakhstan kenya kosovo koweit laos
    lettonie liban liberia libye lituanie macedoine madagascar maghreb malaisie mali malte maroc martinique
    maurice mauritanie mayotte mexique moldavie mongolie montenegro mozambique namibie nepal nicaragua niger
    nigeria norvege ouganda ouzbekistan pakistan palestine panama paraguay pays-bas perou philippines pologne
    polynesie portugal quebec reunion roumanie royaume-uni russie rwanda salvador senegal serbie slovaquie
    slovenie somalie soudan suede suisse syrie tadjikistan taiwan tanzanie tchad tchecoslovaquie tchequie
    thailande togo tunisie turquie ukraine uruguay venezuela vietnam yemen yougoslavie zambie zimbabwe
    alsace aquitaine auvergne bourgogne bretagne champagne corse franche-comte gascogne lorraine limousin
    normandie occitanie picardie poitou provence savoie touraine vendee""".split()
)
#: French départements, regions and "pays" that are no commune's name (folded, one token each): a place cue
#: announces them too (``originaire du Finistère``, ``CH de Cornouaille``), and a region is not annotated.
#: Those that are also communes (Paris, Vienne, Indre, Landes, Mayenne, Doubs...) are left out, and so are the
#: names of several words.
FRENCH_REGIONS = frozenset(
    """ain aisne alpes-maritimes ardeche ardennes ariege aude aveyron bouches-du-rhone calvados cantal
    charente charente-maritime cher cote-d'or cotes-d'armor creuse dordogne drome eure eure-et-loir
    finistere gard nord haute-garonne gers gironde herault ille-et-vilaine indre-et-loire isere jura
    loir-et-cher loire haute-loire loire-atlantique loiret lot-et-garonne lozere maine-et-loire manche marne
    haute-marne meurthe-et-moselle meuse morbihan moselle nievre oise orne pas-de-calais puy-de-dome
    pyrenees-atlantiques hautes-pyrenees pyrenees-orientales bas-rhin haut-rhin rhone haute-saone saone-et-loire
    sarthe haute-savoie seine-maritime seine-et-marne yvelines deux-sevres somme tarn tarn-et-garonne
    haute-vienne vosges yonne essonne hauts-de-seine seine-saint-denis val-de-marne val-d'oise hautes-alpes
    ile-de-france hauts-de-france nouvelle-aquitaine cornouaille tregor""".split()
)
#: Cities of the countries whose postcodes are four digits (Belgium, Switzerland, Luxembourg, Denmark,
#: Austria...) or ``NNNN-NNN`` (Portugal), which the French rule never reads as postcodes: ``1000 Bruxelles``,
#: ``1211 Genève``, ``4000-123 Porto``. Only these are trusted without a country on the line.
FOREIGN_POSTCODE_CITIES = frozenset(
    """bruxelles brussel liege namur charleroi anvers antwerpen gand gent mons tournai louvain leuven bruges
    brugge arlon wavre mouscron verviers ostende geneve lausanne berne bern bale basel zurich fribourg neuchatel
    sion lugano montreux yverdon delemont luxembourg esch-sur-alzette differdange dudelange ettelbruck
    porto lisboa lisbonne braga coimbra faro aveiro viseu leiria setubal funchal guimaraes vienne wien
    copenhague oslo""".split()
)

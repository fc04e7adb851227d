"""IIIF manifests served by themet (from the fake Met, through themet's libcurl client), validated
against the IIIF Presentation 3 JSON schema written from the specification
(iiif-presentation-3.schema.json) and loaded by iiif-prezi3 (PyPI), whose models come from the
IIIF community's schema."""

import copy
import json
import unittest
from pathlib import Path

import jsonschema

from servers import Servers

SCHEMA = json.loads((Path(__file__).parent / "iiif-presentation-3.schema.json").read_text())
CONTEXT = "http://iiif.io/api/presentation/3/context.json"
# Every public-domain record of Fixtures/: real Met bodies of three schemas, with and without
# measurements, with up to 17 additional images.
FIXTURE_PUBLIC_DOMAIN = [198799, 203933, 309529, 321412, 336228, 356497, 436286, 436533, 436535, 437056, 437980,
                         452641, 452655, 45734, 460863, 47533, 544120, 63372]


def errors(manifest):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return sorted(validator.iter_errors(manifest), key=lambda error: list(error.path))


class ManifestTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jsonschema.Draft202012Validator.check_schema(SCHEMA)
        cls.servers = Servers(fake=["--synthetic", "400"],
                              themet=["--upstream-rate", "1000", "--upstream-burst", "1000"])

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()

    def manifest(self, object_id):
        status, headers, body = self.servers.get(f"/iiif/{object_id}/manifest.json")
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(headers["Content-Type"], f'application/ld+json;profile="{CONTEXT}"')
        return json.loads(body)

    def record(self, object_id):
        return json.loads(self.servers.get(f"/objects/{object_id}")[2])

    def public_domain_ids(self):
        """Fixture records and synthetic ones, public domain, some with several images."""
        batch = json.loads(self.servers.get("/objects?ids=" + ",".join(map(str, range(1, 101))) + "&wait=30000")[2])
        synthetic = [record["objectID"] for record in batch["objects"] if record["isPublicDomain"]]
        self.assertTrue(any(len(record["additionalImages"]) > 1 for record in batch["objects"]))
        return FIXTURE_PUBLIC_DOMAIN + synthetic[:30]

    def test_every_manifest_meets_the_schema_and_paints_each_image_once(self):
        for object_id in self.public_domain_ids():
            with self.subTest(object_id=object_id):
                manifest = self.manifest(object_id)
                self.assertEqual(errors(manifest), [])
                record = self.record(object_id)
                self.assertEqual(manifest["label"], {"en": [record["title"]]})
                images = [record["primaryImage"]] + [url for url in record["additionalImages"]
                                                      if url != record["primaryImage"]]
                painted = []
                for index, canvas in enumerate(manifest["items"]):
                    [page] = canvas["items"]
                    [annotation] = page["items"]
                    self.assertEqual(annotation["target"], canvas["id"])
                    painted.append(annotation["body"]["id"])
                    # Each picture of the image host names this server's Image API service.
                    [service] = annotation["body"]["service"]
                    self.assertEqual(service, {"id": f"{self.servers.url}/iiif/{object_id}/{index}",
                                               "type": "ImageService3", "profile": "level2"})
                self.assertEqual(painted, list(dict.fromkeys(images)))
                ids = [manifest["id"]] + [canvas["id"] for canvas in manifest["items"]]
                ids += [page["id"] for canvas in manifest["items"] for page in canvas["items"]]
                self.assertEqual(len(ids), len(set(ids)), "every id is distinct")
                self.assertTrue(manifest["id"].startswith(self.servers.url + "/iiif/"))

    def test_the_services_answer_their_info_json(self):
        manifest = self.manifest(437980)
        for canvas in manifest["items"][:2]:
            [service] = canvas["items"][0]["items"][0]["body"]["service"]
            status, headers, body = self.servers.get(service["id"].removeprefix(self.servers.url) + "/info.json")
            self.assertEqual(status, 200, body[:300])
            info = json.loads(body)
            self.assertEqual((info["id"], info["type"], info["profile"]), (service["id"], "ImageService3", "level2"))
            self.assertGreater(info["width"], 0)

    def test_iiif_prezi3_loads_every_manifest(self):
        from iiif_prezi3 import Manifest

        for object_id in [436535, 437980, 45734]:
            with self.subTest(object_id=object_id):
                loaded = Manifest(**self.manifest(object_id))
                self.assertEqual(len(loaded.items), len(self.manifest(object_id)["items"]))

    def test_the_schema_refuses_what_the_specification_forbids(self):
        manifest = self.manifest(436535)
        broken = {
            "no label": lambda m: m.pop("label"),
            "a plain-string label": lambda m: m.update(label="Wheat Field"),
            "another type": lambda m: m.update(type="Collection"),
            "no canvas": lambda m: m.update(items=[]),
            "a canvas without an extent": lambda m: [m["items"][0].pop(key) for key in ("width", "height")],
            "a canvas id with a fragment": lambda m: m["items"][0].update(id=m["items"][0]["id"] + "#x"),
            "an annotation without motivation": lambda m: m["items"][0]["items"][0]["items"][0].pop("motivation"),
            "rights that are not a licence URI": lambda m: m.update(rights="CC0"),
            "an unknown behavior": lambda m: m.update(behavior=["sideways"]),
        }
        for name, breaks in broken.items():
            with self.subTest(name):
                copied = copy.deepcopy(manifest)
                breaks(copied)
                self.assertNotEqual(errors(copied), [], f"the schema accepted {name}")

    def test_objects_without_public_images_are_a_404_saying_why(self):
        status, headers, body = self.servers.get("/iiif/1/manifest.json")
        self.assertEqual(status, 404)
        self.assertEqual(headers["Content-Type"], "application/problem+json")
        self.assertEqual(json.loads(body)["code"], "not_public_domain")


if __name__ == "__main__":
    unittest.main()

"""What a provider submits: the bundle (``bundle``: a folder or archive), its manifest
(``manifest``), the workload basket a buyer names, the sample bundles, and an llmb-run
package drafted into a manifest (``intake``). The first step of the pipeline.
"""
